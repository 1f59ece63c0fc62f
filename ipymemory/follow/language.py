"""Which language a prose text is written in, and the names of languages (SPEC §14).

:func:`identify` is the package's one detector (:mod:`ipymemory._language`, shared with
screening) asked for at least ``FOLLOW_LANGUAGE_MIN_WORDS`` words (or
``FOLLOW_LANGUAGE_MIN_CJK`` East Asian letters): too few words, or no clear lead, give
no answer (None), never a guess -- the check then leaves the question to the side model.
``wordfreq``'s lists are loaded on first use: a turn's answer never waits for them (the
check runs after the answer).
"""

from __future__ import annotations

from functools import cache

from .. import _constants as C
from .._language import detect, language_label

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


@cache
def names_to_codes() -> dict[str, str]:
    """Every language name of :data:`LANGUAGE_NAMES` -> its code."""
    return {name: code for code, names in LANGUAGE_NAMES.items() for name in names}


def identify(prose: str) -> str | None:
    """The language code of ``prose``, or None when it is too short or not clear: the
    package's one detector (:func:`ipymemory._language.detect`), from
    ``FOLLOW_LANGUAGE_MIN_WORDS`` words (``FOLLOW_LANGUAGE_MIN_CJK`` East Asian letters)."""
    return detect(prose, min_words=C.FOLLOW_LANGUAGE_MIN_WORDS, min_cjk=C.FOLLOW_LANGUAGE_MIN_CJK)
