"""Which language a prose text is written in, and the names of languages (SPEC §14).

Scripts decide first: Han without kana is Chinese, kana Japanese, Hangul Korean, and
Greek, Hebrew, Devanagari, Thai each their language; Cyrillic is Ukrainian with its own
letters, else Russian. Arabic script chooses among its languages, and Latin script among
its languages, by word frequencies: each word scores its Zipf frequency in each
candidate language (``wordfreq``'s lists, built from many sources), and a language wins
when its mean is at least ``FOLLOW_LANGUAGE_MIN_ZIPF`` and leads the next by
``FOLLOW_LANGUAGE_MARGIN``. Too few words, or no clear lead: no answer (None),
never a guess -- the check then leaves the question to the side model.

``wordfreq`` is imported on first use: its lists take a tenth of a second to load, and
a turn's answer never waits for it (the check runs after the answer).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from functools import cache
from typing import Any

from .. import _constants as C

__all__ = ["LANGUAGE_NAMES", "identify", "language_label", "names_to_codes"]

# Code -> the names a memory may use for the language: in English, in the language
# itself and in the other languages of the list (lowercased, accents as written).
LANGUAGE_NAMES: dict[str, tuple[str, ...]] = {
    "en": (
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
    "pl": ("polish", "polnisch", "polonais", "polaco", "polacco", "polski", "po polsku"),
    "cs": ("czech", "tschechisch", "tchèque", "checo", "čeština", "česky"),
    "tr": ("turkish", "türkisch", "turc", "turco", "türkçe", "turkce", "土耳其语"),
    "ru": (
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
    "uk": ("ukrainian", "ukrainisch", "ukrainien", "ucraniano", "українська", "乌克兰语"),
    "el": ("greek", "griechisch", "grec", "griego", "greco", "ελληνικά", "希腊语"),
    "he": ("hebrew", "hebräisch", "hébreu", "hebreo", "עברית"),
    "ar": ("arabic", "arabisch", "arabe", "árabe", "arabo", "العربية", "阿拉伯语"),
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
}
_LABELS = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
    "pt": "Portuguese", "nl": "Dutch", "sv": "Swedish", "da": "Danish", "nb": "Norwegian",
    "fi": "Finnish", "pl": "Polish", "cs": "Czech", "tr": "Turkish", "ru": "Russian",
    "uk": "Ukrainian", "el": "Greek", "he": "Hebrew", "ar": "Arabic", "hi": "Hindi",
    "zh": "Chinese", "ja": "Japanese", "ko": "Korean",
}  # fmt: skip
# Languages chosen by word frequencies, per script (wordfreq's small lists).
_LATIN = ("en", "de", "fr", "es", "it", "pt", "nl", "sv", "da", "nb", "fi", "pl", "cs", "tr")
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)?")


def language_label(code: str) -> str:
    """The English name of language ``code`` (the code itself if unknown)."""
    return _LABELS.get(code, code)


@cache
def names_to_codes() -> dict[str, str]:
    """Every language name of :data:`LANGUAGE_NAMES` -> its code."""
    return {name: code for code, names in LANGUAGE_NAMES.items() for name in names}


def identify(prose: str) -> str | None:
    """The language code of ``prose``, or None when it is too short or not clear."""
    scripts = _scripts(prose)
    cjk = scripts["han"] + scripts["kana"] + scripts["hangul"]
    letters = sum(scripts.values())
    if not letters:
        return None
    if cjk >= C.FOLLOW_LANGUAGE_MIN_CJK and cjk * 2 >= letters - cjk:
        if scripts["hangul"] > scripts["han"] + scripts["kana"]:
            return "ko"
        # Japanese mixes kanji with kana; Chinese has none.
        return "ja" if scripts["kana"] * 10 >= scripts["han"] + scripts["kana"] else "zh"
    major, count = max(((s, n) for s, n in scripts.items()), key=lambda item: item[1])
    if count * 2 < letters:
        return None
    single = {"greek": "el", "hebrew": "he", "devanagari": "hi", "thai": "th"}
    if major in single:
        return single[major] if count >= C.FOLLOW_LANGUAGE_MIN_CJK else None
    if major == "cyrillic":
        if len(_WORD.findall(prose)) < C.FOLLOW_LANGUAGE_MIN_WORDS:
            return None
        # Letters Russian does not have are Ukrainian's (i with one or two dots, ye, ghe).
        return "uk" if re.search("[іїєґІЇЄҐ]", prose) else "ru"
    if major == "arabic":
        return _by_frequency(prose, ("ar", "fa", "ur"))
    if major == "latin":
        return _by_frequency(prose, _LATIN)
    return None


def _scripts(text: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for ch in text:
        if not ch.isalpha():
            continue
        o = ord(ch)
        if 0x3040 <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF or 0xFF66 <= o <= 0xFF9D:
            counts["kana"] += 1
        elif 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0xF900 <= o <= 0xFAFF:
            counts["han"] += 1
        elif 0xAC00 <= o <= 0xD7AF or 0x1100 <= o <= 0x11FF or 0x3130 <= o <= 0x318F:
            counts["hangul"] += 1
        else:
            name = unicodedata.name(ch, "")
            script = name.split(" ", 1)[0].lower()
            counts[script if script in _NAMED_SCRIPTS else "other"] += 1
    return counts


_NAMED_SCRIPTS = frozenset({"latin", "cyrillic", "greek", "hebrew", "arabic", "devanagari", "thai"})


def _by_frequency(prose: str, candidates: tuple[str, ...]) -> str | None:
    words = [w.lower() for w in _WORD.findall(prose)]
    if len(words) < C.FOLLOW_LANGUAGE_MIN_WORDS:
        return None
    scores = {}
    for code in candidates:
        table = _frequencies(code)
        # The mean Zipf value (log10 of uses per billion words; 0 for a word the
        # language does not have): shared words lift related languages alike, the
        # words only one language has decide.
        scores[code] = sum(_zipf(table.get(word, 0.0)) for word in words) / len(words)
    ranked = sorted(scores.items(), key=lambda item: -item[1])
    (best, top), (_, second) = ranked[0], ranked[1]
    if top < C.FOLLOW_LANGUAGE_MIN_ZIPF or top - second < C.FOLLOW_LANGUAGE_MARGIN:
        return None
    return best


def _zipf(frequency: float) -> float:
    return math.log10(frequency) + 9 if frequency > 0 else 0.0


@cache
def _frequencies(code: str) -> dict[str, float]:
    # Imported here: loading wordfreq and its lists is for the check, after the answer.
    import wordfreq

    table: dict[str, Any] = wordfreq.get_frequency_dict(code, wordlist="small")
    return table
