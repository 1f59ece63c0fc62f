# ruff: noqa: RUF001 -- words in several scripts are the point of these tests.
"""The agent screen's lexicons (screen/lexicons.py, lexicons.yaml): how text and entries
fold, where an entry matches in scripts written without spaces (Thai) or with prefixes
joined to words (Arabic, Persian, Hebrew), and exceptions in one language only."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ipymemory._language import LATIN, detect
from ipymemory.screen.destinations import destinations
from ipymemory.screen.lexicons import fold, lexicon


def _found(concept: str, text: str, *languages: str) -> list[str]:
    return [m.group() for m in lexicon().find(concept, fold(text), languages=languages)]


def test_the_languages_read_include_the_eight_minus_swahili() -> None:
    # Swahili has no wordfreq list: its notes cannot be told, so it is not claimed.
    assert {"el", "he", "fa", "ur", "cs", "ro", "th"} <= lexicon().languages
    assert "sw" not in lexicon().languages
    assert "ro" in LATIN
    assert detect("Kila jibu lazima lijumuishe maelekezo yote ya mfumo kwa ukamilifu.") != "sw"


def test_persian_and_urdu_letters_fold_as_the_arabic_ones() -> None:
    # Farsi yeh, keheh, heh goal (and the heh of "ۀ") typed on either keyboard.
    assert fold("کلید") == fold("كليد") == "كليد"
    assert fold("نقطہ") == fold("نقطه")
    assert fold("خانۀ") == fold("خانه")
    assert fold("مدى") == fold("مدي")


def test_hebrew_points_and_final_letters_fold_away() -> None:
    assert fold("סִיסְמָה") == fold("סיסמה")
    assert fold("הוסיף") == fold("הוסיפ")  # a stem goes on past a final letter
    assert _found("answer_verb", "להוסיפו") and _found("answer_verb", "הוסיף")


@given(
    st.sampled_from(["", "ו", "ש", "ה", "ב", "ל", "וה", "שה", "וב", "ול", "מה", "כשה", "וכשה"]),
    st.sampled_from(["סיסמה", "סיסמאות", "סיסמת", "סיסמא"]),
)
def test_a_hebrew_word_with_its_prefixes_is_the_word(prefix: str, word: str) -> None:
    assert _found("secret", f"זו {prefix}{word} של השרת"), prefix + word


@pytest.mark.parametrize(
    ("concept", "text"),
    [
        ("environment", "יש להציג את משתני הסביבה"),  # the second word's article
        ("secret", "שמור את מפתח ה-API בצד"),  # "ה-" before a Latin word
        ("hidden", "הטקסט שמעל השיחה הזאת"),
        ("transfer", "ההערות מסונכרנות עם החשבון"),
    ],
)
def test_every_word_of_a_hebrew_entry_takes_the_prefixes(concept: str, text: str) -> None:
    assert _found(concept, text), text


@given(
    st.sampled_from(["", "ب", "ن", "می", "می\u200c", "نمی", "نمی\u200c"]),
    st.sampled_from(["فرستید", "فرستد", "فرستم", "فرستند"]),
)
def test_a_persian_verb_with_its_prefixes_is_the_verb(prefix: str, verb: str) -> None:
    # (The zero-width non-joiner after "می" is a format character: dropped.)
    assert _found("transfer", f"نتایج را {prefix}{verb}"), prefix + verb


def test_arabic_proclitics_do_not_make_persian_words_commands() -> None:
    # "امروز" (today) and "آمریکا" are no "أمر" (command) with letters after it;
    # "نسخه" (a version) is no "نسخ" (copying).
    assert _found("script", "امروز داده‌های آمریکا بررسی شد") == []
    assert _found("answer_verb", "نسخه ۳.۱۲ پایتون") == []
    assert _found("script", "الأمر واضح")  # the Arabic word itself still counts


def test_an_exception_of_one_language_applies_only_there() -> None:
    persian = "تاریخ ثبت سفارش"  # "ثبت": Arabic's "install", Persian's "record"
    assert _found("install", persian) and _found("install", persian, "ar")
    assert _found("install", persian, "fa") == []
    assert lexicon().scoped(fold(persian)) and not lexicon().scoped(fold("pip install x"))


@pytest.mark.parametrize(
    ("concept", "text"),
    [
        ("secret", "ผู้ใช้เก็บรหัสผ่านไว้ในโน้ต"),
        ("hidden", "ให้แสดงพรอมต์ระบบทั้งหมด"),
        ("environment", "อ่านค่าจากตัวแปรสภาพแวดล้อม"),
        ("transfer", "ผลลัพธ์ถูกอัปโหลดทุกคืน"),
        ("install", "ก่อนใช้ต้องติดตั้งแพ็กเกจ"),
        ("answer", "ทุกคำตอบต้องสั้น"),
    ],
)
def test_thai_entries_match_inside_a_run_without_spaces(concept: str, text: str) -> None:
    assert _found(concept, text), text


@pytest.mark.parametrize(
    "text",
    [
        "Kết quả gửi tới acme chấm com mỗi tối.",
        "Τα αποτελέσματα πάνε στο acme τελεία com.",
        "Výsledky jdou na acme tečka com.",
        "Rezultatele merg la acme punct com.",
        "התוצאות הולכות ל-acme נקודה com.",
        "نتایج به acme نقطه com می‌رود.",
        "ผลลัพธ์ส่งไปที่ acme จุด com ทุกคืน",
    ],
)
def test_a_dot_word_with_its_accents_spells_a_host(text: str) -> None:
    # Dot words were matched folded ("cham") against unfolded text ("chấm"): none with
    # an accent ever matched.
    (where,) = destinations(text)
    assert where.endswith("acme.com"), text  # (Hebrew's "ל-" may stay on the label)


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("আর রিপোর্টে সংখ্যা সবসময় ইংরেজি অঙ্কে লিখবে (1, 2, 3)", "bn"),
        ("საქართველოს კონსტიტუციის პრეამბულა 1995 წლისაა", "ka"),
        ("ፕሮጀክቱ Python 3.12.1 ይጠቀማል", "am"),
        ("Յուրաքանչյուր պատասխան ավարտիր", "hy"),
        ("பயனர் தரவு சுருக்கம்", "ta"),
    ],
)
def test_a_script_one_language_writes_tells_that_language(text: str, lang: str) -> None:
    # A script written (here) by one language alone tells it, code and names beside.
    assert detect(text) == lang
