# Names of languages in many scripts are the point of this module.
# ruff: noqa: RUF001
"""The one language detector of the package: which language a text is written in.

Used by screening (an item's language, a file's, the user's: ``screen/lexicon.py``
``language``; whether the agent screen reads an item: ``screen/agent.py``) and by the
follow-up check (an answer's language: ``follow/language.py`` ``identify``, which asks
for enough words to never guess on a short reply). Before issue 39 the two had a
detector each and disagreed; this one keeps screening's method, which was measured
better on the held-out corpora's user messages (639 of 682 right, 2 wrong, against 478
right and 204 without an answer for the other; both the same on answers).

**Scripts first.** Letters of East Asian scripts making up a third of the text decide:
Hangul most of them ``ko``; kana a tenth of the kana and ideographs ``ja``; else ``zh``;
so do Thai letters (``th``), written, like those, beside code and names in Latin letters
("ทีมชอบ plotly มากกว่า matplotlib"). Otherwise the script of most letters: Greek ``el``,
Hebrew ``he``, Devanagari ``hi``; Cyrillic ``uk`` with letters only Ukrainian has, else
chosen by words among :data:`CYRILLIC`; Arabic script by words among :data:`ARABIC`;
Latin script by words among :data:`LATIN`.

**Words.** When the text holds at least one function word (one of the
``LEXICON_FUNCTION_WORDS_TOP`` most frequent words) of a candidate language -- code and
lists of names hold none -- each candidate scores the sum of the Zipf frequencies of
the text's words in ``wordfreq``'s lists (built from subtitles, web text, books and
more); the best wins when it leads the next by a tenth. No lead, no answer (None).

**Names.** :data:`LANGUAGE_NAMES` holds the names a text may give a language, in English,
in itself and in other languages; :func:`languages_named` finds them in any text (the
follow-up check's "answer in German", screening's "a translation keeps the languages its
source names").

``min_words`` / ``min_cjk``: the fewest words (or East Asian letters) to judge at all;
a shorter text gets None (the follow-up check's "never a guess").
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from functools import cache
from importlib import resources

from . import _constants as C

__all__ = [
    "ARABIC",
    "CYRILLIC",
    "LANGUAGE_NAMES",
    "LATIN",
    "all_function_words",
    "detect",
    "frequencies",
    "function_words",
    "language_label",
    "languages_named",
    "names_to_codes",
    "script_of",
    "words_of",
    "zipf",
]

#: Latin-script languages told apart by their words (wordfreq's small lists).
LATIN = C.LANGUAGE_LATIN
#: Cyrillic-script languages told apart by their words (Ukrainian by its letters).
CYRILLIC = ("ru", "bg", "mk")
#: Arabic-script languages told apart by their words.
ARABIC = ("ar", "fa", "ur")
# A script one language writes (here) alone: its letters tell the language.
_SINGLE_SCRIPT = {
    "greek": "el", "hebrew": "he", "devanagari": "hi", "thai": "th", "bengali": "bn",
    "georgian": "ka", "armenian": "hy", "ethiopic": "am", "tamil": "ta", "telugu": "te",
    "gujarati": "gu", "gurmukhi": "pa", "kannada": "kn", "malayalam": "ml", "sinhala": "si",
    "khmer": "km", "lao": "lo", "myanmar": "my",
}  # fmt: skip
_WORDLIST = "small"
#: How far the best language's score must lead the next one's.
_LEAD = 1.1
#: The most words a text's language is judged on.
_MAX_WORDS = 200
#: How many languages (those whose function words a text holds most) are scored, when
#: the likeliest holds at least ``_SHORTLIST_HITS`` of the text's words.
_SHORTLIST = 4
_SHORTLIST_HITS = 3
_FUNCTION_WORDS = "_function_words.json"
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)?")


@cache
def frequencies(lang: str) -> dict[str, float]:
    """``lang``'s word -> frequency table (loaded once, on first use)."""
    import wordfreq  # its lists take a tenth of a second: loaded when first needed

    if lang not in wordfreq.available_languages(_WORDLIST):
        return {}  # Thai has no list: its words are unknown, not an error
    table: dict[str, float] = wordfreq.get_frequency_dict(lang, _WORDLIST)
    return table


def zipf(word: str, lang: str) -> float:
    """The word's Zipf frequency in ``lang`` (log10 per billion words), 0 when the small
    list does not hold it."""
    freq = frequencies(lang).get(word.casefold(), 0.0)
    return math.log10(freq) + 9 if freq > 0 else 0.0


@cache
def _function_word_table() -> dict[str, frozenset[str]]:
    data = json.loads(resources.files(__package__).joinpath(_FUNCTION_WORDS).read_text("utf-8"))
    return {lang: frozenset(words) for lang, words in data["languages"].items()}


@cache
def function_words(lang: str) -> frozenset[str]:
    """The most frequent words of ``lang`` without digits (casefolded): kept in
    ``_function_words.json`` (wordfreq's top words, checked against it by the tests), so
    telling which languages a text could be in loads no word list."""
    table = _function_word_table()
    if lang in table:
        return table[lang]
    import wordfreq

    if not frequencies(lang):
        return frozenset()
    top = wordfreq.top_n_list(lang, C.LEXICON_FUNCTION_WORDS_TOP, _WORDLIST)
    return frozenset(w for w in top if not any(c.isdigit() for c in w))


def words_of(text: str) -> list[str]:
    """The words of ``text``'s prose (letters, an inner apostrophe), casefolded: a token
    with code punctuation inside (``df.group_by``, ``config/train.yaml``, ``f(x)``) is
    code, not words of a language."""
    prose = " ".join(t for t in text.casefold().split() if not _CODE_TOKEN.search(t.strip(_EDGES)))
    return _WORD.findall(prose)


_CODE_TOKEN = re.compile(r"\w[._/\\=()\[\]{}<>@$:|]+\w|\w\(")
_EDGES = ".,;:!?()[]{}\"'`*"


def detect(
    text: str,
    *,
    min_words: int = 1,
    min_cjk: int = 1,
    function_word: bool = True,
    lead: float = _LEAD,
) -> str | None:
    """The language of ``text`` (ISO 639-1), or None when it cannot tell (see the module
    docstring). ``function_word=False`` judges Latin-script words without first asking
    for a function word (a terse note, "Tabel sales punya kolom region", has none);
    ``lead`` is how far the best language's score must lead the next one's."""
    scripts = _scripts(text)
    letters = sum(scripts.values())
    if not letters:
        return None
    east = scripts["han"] + scripts["kana"] + scripts["hangul"]
    if east * 3 > letters:
        if east < min_cjk:
            return None
        if scripts["hangul"] * 2 > east:
            return "ko"
        return "ja" if scripts["kana"] * 10 >= scripts["han"] + scripts["kana"] else "zh"
    if scripts["thai"] * 3 > letters:  # Thai with code and names in Latin letters
        return "th" if scripts["thai"] >= min_cjk else None
    major, count = max(scripts.items(), key=lambda item: item[1])
    if count * 2 < letters:
        return None
    if major in _SINGLE_SCRIPT:
        return _SINGLE_SCRIPT[major] if count >= min_cjk else None
    words = words_of(text)
    if len(words) < min_words:
        return None
    # A language shows in its first words; a long file costs no more than they do.
    words = words[:_MAX_WORDS]
    if major == "cyrillic":
        # Letters Russian does not have are Ukrainian's (i with one or two dots, ye, ghe).
        if re.search("[іїєґ]", text.casefold()):
            return "uk"
        cyrillic = [w for w in words if _in_script(w, "CYRILLIC")]
        return _by_words(cyrillic, CYRILLIC, gate=False, lead=lead)
    if major == "arabic":
        arabic = [w for w in words if _in_script(w, "ARABIC")]
        return _by_words(arabic, ARABIC, gate=False, lead=lead)
    if major == "latin":
        return _by_words(words, LATIN, gate=function_word, lead=lead)
    return None


def _in_script(word: str, script: str) -> bool:
    return unicodedata.name(word[0], "").startswith(script)


def _by_words(
    words: list[str], candidates: tuple[str, ...], *, gate: bool = True, lead: float = _LEAD
) -> str | None:
    # Prose has function words; code and lists of names have none to tell by (a text
    # mostly in another script than Latin is prose already: no gate).
    if not words:
        return None
    # In prose that holds several function words of one language, the languages whose
    # function words it holds most are the candidates (an English text holds Italian's
    # "a" and Dutch's "in" too, but many more English ones): only their word lists are
    # read. A short text is scored in every candidate (its few words may all be another
    # language's function words: "e", "s").
    hits = sorted(
        ((len(function_words(lang).intersection(words)), lang) for lang in candidates),
        key=lambda hit: -hit[0],
    )
    if hits[0][0] == 0 and gate:
        return None
    if hits[0][0] >= _SHORTLIST_HITS:  # prose enough to tell by: the likeliest few
        candidates = tuple(lang for n, lang in hits[:_SHORTLIST] if n > 0)
    if len(candidates) == 1:
        return candidates[0]
    # The language whose words cover the text best ("a real server per test session"
    # holds Italian's "a" and "per", but its other words are English).
    scores = sorted(((_score(words, lang), lang) for lang in candidates), reverse=True)
    (best, lang), (second, _) = scores[0], scores[1]
    return lang if best > second * lead else None


def _score(words: list[str], lang: str) -> float:
    """The sum of the words' Zipf frequencies in ``lang``."""
    table = frequencies(lang)
    found = [f for f in map(table.get, words) if f]
    return sum(map(math.log10, found)) + 9 * len(found)


_NAMED_SCRIPTS = frozenset({"latin", "cyrillic", "arabic", *_SINGLE_SCRIPT})


def _scripts(text: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    ascii_letters = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    if ascii_letters:
        counts["latin"] += ascii_letters
    for ch in text:
        if ch.isascii() or not ch.isalpha():
            continue
        o = ord(ch)
        if 0x3040 <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF or 0xFF66 <= o <= 0xFF9D:
            counts["kana"] += 1
        elif 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0xF900 <= o <= 0xFAFF:
            counts["han"] += 1
        elif 0xAC00 <= o <= 0xD7AF or 0x1100 <= o <= 0x11FF or 0x3130 <= o <= 0x318F:
            counts["hangul"] += 1
        else:
            script = unicodedata.name(ch, "").split(" ", 1)[0].lower()
            counts[script if script in _NAMED_SCRIPTS else "other"] += 1
    return counts


def script_of(text: str) -> str | None:
    """The script most of ``text``'s letters are written in ("latin", "cyrillic",
    "arabic", "han", "kana", "hangul", "greek", "thai" …), or None when it has none."""
    counts = _scripts(text)
    return counts.most_common(1)[0][0] if counts else None


@cache
def all_function_words() -> frozenset[str]:
    """The function words of every language the screen tells apart
    (``LEXICON_LANGUAGES``) and of ja/ko/zh."""
    langs = (*C.LEXICON_LANGUAGES, "ja", "ko", "zh")
    return frozenset().union(*(function_words(lang) for lang in langs))


_LABELS = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
    "pt": "Portuguese", "nl": "Dutch", "sv": "Swedish", "da": "Danish", "nb": "Norwegian",
    "fi": "Finnish", "pl": "Polish", "cs": "Czech", "tr": "Turkish", "ru": "Russian",
    "uk": "Ukrainian", "el": "Greek", "he": "Hebrew", "ar": "Arabic", "hi": "Hindi",
    "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "id": "Indonesian",
    "vi": "Vietnamese", "ro": "Romanian", "hu": "Hungarian", "ca": "Catalan", "sk": "Slovak",
    "sl": "Slovenian", "sh": "Serbo-Croatian", "lt": "Lithuanian", "lv": "Latvian",
    "is": "Icelandic", "fil": "Filipino", "bg": "Bulgarian", "mk": "Macedonian",
    "fa": "Persian", "ur": "Urdu", "th": "Thai", "bn": "Bengali", "ka": "Georgian",
    "hy": "Armenian", "am": "Amharic", "ta": "Tamil", "te": "Telugu", "gu": "Gujarati",
    "pa": "Punjabi", "kn": "Kannada", "ml": "Malayalam", "si": "Sinhala", "km": "Khmer",
    "lo": "Lao", "my": "Burmese",
}  # fmt: skip


def language_label(code: str) -> str:
    """The English name of language ``code`` (the code itself if unknown)."""
    return _LABELS.get(code, code)


# Code -> the names a memory may use for the language: in English, in the language
# itself and in the other languages of the list (lowercased, accents as written).
LANGUAGE_NAMES: dict[str, tuple[str, ...]] = {
    "en": (
        "ingilizce",
        "anglicky",
        "angličtina",
        "angličtinu",
        "angličtině",
        "английский",
        "английском",
        "по-английски",
        "англійська",
        "англійською",
        "angielski",
        "angielsku",
        "αγγλικά",
        "אנגלית",
        "الإنجليزية",
        "الانجليزية",
        "انجليزي",
        "انگلیسی",
        "अंग्रेज़ी",
        "अंग्रेजी",
        "tiếng anh",
        "bahasa inggris",
        "engelska",
        "engelsk",
        "englanti",
        "englanniksi",
        "angolul",
        "engleză",
        "engleza",
        "อังกฤษ",
        "english",
        "englisch",
        "anglais",
        "inglés",
        "ingles",
        "inglese",
        "inglês",
        "engels",
        "英语",
        "英文",
        "英語",
        "영어",
    ),
    "de": (
        "almanca",
        "německy",
        "niemiecki",
        "po niemiecku",
        "немецкий",
        "по-немецки",
        "γερμανικά",
        "german",
        "deutsch",
        "allemand",
        "alemán",
        "aleman",
        "tedesco",
        "alemão",
        "duits",
        "德语",
        "德文",
        "ドイツ語",
        "독일어",
    ),
    "fr": (
        "fransızca",
        "francouzsky",
        "francuski",
        "po francusku",
        "французский",
        "french",
        "französisch",
        "franzoesisch",
        "français",
        "francais",
        "francés",
        "frances",
        "francese",
        "francês",
        "frans",
        "法语",
        "法文",
        "フランス語",
        "프랑스어",
    ),
    "es": (
        "ispanyolca",
        "španělsky",
        "hiszpański",
        "испанский",
        "spanish",
        "spanisch",
        "espagnol",
        "español",
        "espanol",
        "castellano",
        "spagnolo",
        "espanhol",
        "spaans",
        "西班牙语",
        "西班牙文",
        "スペイン語",
        "스페인어",
    ),
    "it": ("italian", "italienisch", "italien", "italiano", "italiaans", "意大利语", "イタリア語"),
    "pt": (
        "portuguese",
        "portugiesisch",
        "portugais",
        "portugués",
        "portoghese",
        "português",
        "portugues",
        "portugees",
        "葡萄牙语",
        "ポルトガル語",
    ),
    "nl": (
        "dutch",
        "niederländisch",
        "holländisch",
        "néerlandais",
        "neerlandés",
        "olandese",
        "holandês",
        "nederlands",
        "荷兰语",
    ),
    "sv": ("swedish", "schwedisch", "suédois", "sueco", "svedese", "svenska", "瑞典语"),
    "da": ("danish", "dänisch", "danois", "danés", "danese", "dansk"),
    "nb": ("norwegian", "norwegisch", "norvégien", "noruego", "norsk", "bokmål"),
    "fi": ("finnish", "finnisch", "finnois", "finlandés", "suomi", "suomeksi"),
    "pl": (
        "lehçe",
        "polsky",
        "польский",
        "polish",
        "polnisch",
        "polonais",
        "polaco",
        "polacco",
        "polski",
        "po polsku",
    ),
    "cs": (
        "čeština",
        "češtinu",
        "češtině",
        "czeski",
        "чешский",
        "tsjechisch",
        "czech",
        "tschechisch",
        "tchèque",
        "checo",
        "čeština",
        "česky",
    ),
    "tr": (
        "turecky",
        "turečtina",
        "турецкий",
        "turecki",
        "turkish",
        "türkisch",
        "turc",
        "turco",
        "türkçe",
        "turkce",
        "土耳其语",
    ),
    "ru": (
        "на русском",
        "rusça",
        "rusky",
        "rosyjski",
        "po rosyjsku",
        "ρωσικά",
        "russian",
        "russisch",
        "russe",
        "ruso",
        "russo",
        "русский",
        "по-русски",
        "俄语",
        "ロシア語",
        "러시아어",
    ),
    "uk": (
        "українською",
        "украинский",
        "ukraiński",
        "po ukraińsku",
        "ukrainian",
        "ukrainisch",
        "ukrainien",
        "ucraniano",
        "українська",
        "乌克兰语",
    ),
    "el": (
        "yunanca",
        "στα ελληνικά",
        "ελληνικα",
        "greek",
        "griechisch",
        "grec",
        "griego",
        "greco",
        "ελληνικά",
        "希腊语",
    ),
    "he": ("ibranice", "בעברית", "hebrew", "hebräisch", "hébreu", "hebreo", "עברית"),
    "ar": (
        "arapça",
        "بالعربي",
        "عربي",
        "بالعربية",
        "arabic",
        "arabisch",
        "arabe",
        "árabe",
        "arabo",
        "العربية",
        "阿拉伯语",
    ),
    "hi": ("hindi", "हिन्दी", "हिंदी"),
    "zh": (
        "chinese",
        "mandarin",
        "chinesisch",
        "chinois",
        "chino",
        "cinese",
        "chinês",
        "chinees",
        "中文",
        "汉语",
        "漢語",
        "华语",
        "普通话",
        "简体中文",
        "繁體中文",
        "中国語",
        "중국어",
    ),
    "ja": (
        "japonca",
        "日本語で",
        "japanese",
        "japanisch",
        "japonais",
        "japonés",
        "japones",
        "giapponese",
        "japonês",
        "japans",
        "日语",
        "日文",
        "日本語",
        "일본어",
    ),
    "ko": ("korean", "koreanisch", "coréen", "coreano", "한국어", "韩语", "韓国語"),
    "ro": (
        "romanian",
        "rumänisch",
        "roumain",
        "rumano",
        "rumeno",
        "română",
        "romaneste",
        "românește",
    ),
    "hu": ("hungarian", "ungarisch", "hongrois", "húngaro", "ungherese", "magyar", "magyarul"),
    "vi": ("vietnamese", "vietnamesisch", "vietnamien", "vietnamita", "tiếng việt", "越南语"),
    "id": ("indonesian", "indonesisch", "indonésien", "indonesio", "bahasa indonesia"),
    "th": ("thai", "thailändisch", "thaï", "tailandés", "ภาษาไทย", "泰语"),
    "fa": ("persian", "farsi", "persisch", "persan", "persa", "فارسی"),
}


@cache
def names_to_codes() -> dict[str, str]:
    """Every language name of :data:`LANGUAGE_NAMES` -> its code."""
    return {name: code for code, names in LANGUAGE_NAMES.items() for name in names}


def languages_named(text: str) -> frozenset[str]:
    """The codes of the languages ``text`` names (:data:`LANGUAGE_NAMES`): a name at the
    start of a word, inflected or not ("Türkçe'yi", "češtinu" by "češtin"), or anywhere
    in a script written without spaces ("用中文回答")."""
    names = _bare_names()
    return frozenset(names[m.group()] for m in _names_pattern().finditer(_bare(text)))


def _bare(text: str) -> str:
    """``text`` case folded, without its accents ("İngilizce" and "ingilizce" alike)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@cache
def _bare_names() -> dict[str, str]:
    return {_bare(name): code for name, code in names_to_codes().items()}


@cache
def _names_pattern() -> re.Pattern[str]:
    """Every name in one expression, longest first; a name of a script written without
    spaces anywhere, any other at a word's start."""
    names = sorted(_bare_names(), key=len, reverse=True)
    east = [re.escape(n) for n in names if _NO_SPACES.search(n)]
    spaced = [re.escape(n) for n in names if not _NO_SPACES.search(n)]
    return re.compile("|".join([*east, rf"(?<![^\W\d_])(?:{'|'.join(spaced)})"]))


_NO_SPACES = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
