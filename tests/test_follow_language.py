# Text in many scripts is the point of these tests.
# ruff: noqa: RUF001
"""The language of an answer's prose (SPEC §14): scripts first, then word frequencies."""

from __future__ import annotations

import pytest

from ipymemory._language import languages_named
from ipymemory.follow.language import identify, language_label, names_to_codes


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Here is the code that loads the data and groups it by region for you.", "en"),
        ("Hier ist der Code, der die Daten lädt und nach Region gruppiert.", "de"),
        ("Voici le code qui charge les données et les regroupe par région.", "fr"),
        ("Aquí está el código que carga los datos y los agrupa por región.", "es"),
        ("Ecco il codice che carica i dati e li raggruppa per regione.", "it"),
        ("Aqui está o código que carrega os dados e os agrupa por região.", "pt"),
        (
            "它匹配形如年月的字符串\uff1a开头是四位数字\uff0c然后是一个连字符\uff0c最后是两位数字。",
            "zh",
        ),
        ("このコードはデータを読み込んで、地域ごとにまとめて合計を表示します。", "ja"),
        ("이 코드는 데이터를 읽고 지역별로 묶어서 합계를 보여 줍니다.", "ko"),
        ("Этот код загружает данные и группирует их по регионам для отчёта.", "ru"),
        # German prose with English technical terms is still German.
        (
            "Mit `rename` und einem Dictionary von alt nach neu kannst du die Spalten "
            "umbenennen, zum Beispiel für den DataFrame.",
            "de",
        ),
    ],
)
def test_identifies(text: str, code: str) -> None:
    assert identify(text) == code


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Sure: df.unique()",  # too few words
        "OK, done.",
        "pl.col pl.lit df.filter df.select df.group_by agg sum mean",  # identifiers
        "12345 67890",
    ],
)
def test_no_guess(text: str) -> None:
    assert identify(text) is None


def test_names() -> None:
    codes = names_to_codes()
    assert codes["deutsch"] == codes["german"] == codes["allemand"] == codes["德语"] == "de"
    assert codes["中文"] == "zh" and codes["inglés"] == "en" and codes["日本語"] == "ja"
    assert language_label("de") == "German" and language_label("xx") == "xx"


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        # Inflected, accented, any case: "İngilizce" is "ingilizce"; "češtinu" is Czech.
        ("toplantı notlarını her zaman Türkçe yaz, İngilizce istemiyorum", {"tr", "en"}),
        ("piš mi vždycky česky, ale kód nech anglicky", {"cs", "en"}),
        ("Přelož to do češtinu", {"cs"}),
        ("Always reply in Czech; code comments in English.", {"cs", "en"}),
        ("用中文回答", {"zh"}),
        ("답변은 영어로 해줘", {"en"}),
        ("θέλω απαντήσεις στα ελληνικά", {"el"}),
        ("بالعربي لو سمحت", {"ar"}),
        # A name inside a word is none ("english" is not in "tenglish"); nor is a
        # word that only starts like a short name's tail.
        ("the parser and the tenglish tokens", set()),
        ("ship the build on Friday", set()),
    ],
)
def test_the_languages_a_text_names(text: str, codes: set[str]) -> None:
    assert languages_named(text) == codes
