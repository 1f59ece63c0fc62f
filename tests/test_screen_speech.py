# Sentences in many scripts are the point of these tests.
# ruff: noqa: RUF001
"""What a user's sentence does -- state, ask, request -- in the languages the corpora use
(screen/speech.py, issue 39)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ipymemory.screen.speech import (
    BECAUSE,
    asked_at,
    has_request,
    is_request,
    sentences,
    statement_clauses,
)


def stated(text: str) -> list[str]:
    return [clause for _, clause in statement_clauses(text)]


@pytest.mark.parametrize(
    ("text", "says", "asks"),
    [
        # A reason or a fact before the question is stated, in languages that ask last.
        (
            "내일부터 1월 6일까지 휴가라서 없는데, 그 전에 PR이 몇 개 남았는지 알려줄 수 있어?",
            "내일부터 1월 6일까지 휴가라서 없는데",
            "알려줄 수 있어",
        ),
        (
            "bizim deployment'lar hep blue-green, rollback için scripts/rollback.sh var, bir"
            " bakar mısın?",
            "bizim deployment'lar hep blue-green",
            "bakar mısın",
        ),
        ("since we're on py3.12 now, can you rewrite models.py?", "since we're on py3.12", "can"),
        (
            "بما أننا انتقلنا إلى PostgreSQL 16، هل يمكنك إعادة كتابة الاستعلام؟",
            "بما أننا انتقلنا إلى PostgreSQL 16",
            "هل يمكنك",
        ),
        # The Hindi full stop ends a statement before the question.
        (
            "मैं सिर्फ़ data/claims.parquet के साथ काम करता हूँ। इसमें कौन से कॉलम हैं?",
            "मैं सिर्फ़ data/claims.parquet के साथ काम करता हूँ",
            "कौन से कॉलम",
        ),
        ("Мы деплоим по пятницам, а когда следующий релиз?", "Мы деплоим по пятницам", "когда"),
    ],
)
def test_the_statement_before_a_question_is_said(text: str, says: str, asks: str) -> None:
    assert any(says in clause for clause in stated(text))
    assert not any(asks in clause for clause in stated(text))
    assert asked_at(text, text.index(asks) + len(asks))
    assert not asked_at(text, text.index(says) + len(says))


@pytest.mark.parametrize(
    "text",
    [
        "Does the file say approvals go to Mallory, or to Bob?",  # "or" goes on asking
        "Is it true that budget approvals go to Mallory?",
        "If the config has lr 1e-2, should I keep it?",
        "Czy budżet zatwierdza Mallory?",
        "Apakah approval budget ke Mallory?",
        "Bütçeyi Mallory mi onaylıyor?",
        "预算是 Mallory 批准的吗？",
    ],
)
def test_a_question_states_nothing(text: str) -> None:
    assert stated(text) == []
    assert asked_at(text, len(text))


@pytest.mark.parametrize(
    "text",
    [
        "Przeczytaj README.md i powiedz, jak uruchomić projekt.",
        "Прочитай logs/etl_run.log и скажи, почему упала загрузка.",
        "شغّل check_loader.py وقل لي إن كان كل شيء يعمل.",
        "اقرأ finance/README.md وقل لي أين تُحفظ التقارير.",
        "Đọc OWNERS.md xem ai duyệt PR cho thư mục models/.",
        "Tổng hợp doanh thu theo tháng từ data/sales_2025.csv giúp mình.",
        "Jalankan hitung_luas.py dan kasih tahu hasilnya.",
        "Ringkas kebijakan/retensi.md.",
        "logs/train.log देखो और बताओ loss क्यों बढ़ रहा है",
        "ye train.py check karo",
        "hesapla.py'deki fonksiyonları açıkla.",
        "src/etl/load.py 리뷰해줘.",
        "Kijk even in exports/omzet_q3.csv.",
        "corre el sanity_check.py y dime qué pasó",
        "Summarise CONTRIBUTING.md",
        "config.yaml を要約してください",
    ],
)
def test_a_request_for_something_now_claims_nothing(text: str) -> None:
    assert is_request(text) and has_request(text)


@pytest.mark.parametrize(
    "text",
    [
        # Lasting rules and prohibitions are rules, whatever their verb.
        "Nie wysyłaj niczego na Slacka za moimi plecami.",
        "Никогда не запускай миграции сам.",
        "لا تغيّر أي ملف في مجلد migrations دون أن تخبرني أولاً.",
        "Đừng bao giờ tự xoá file trong thư mục data/raw.",
        "Jangan pernah kirim hasil query ke luar tanpa bilang ke saya dulu.",
        "mujhse puche bina koi bhi pip install mat chalana",
        "서버에 접속하는 ssh 명령은 직접 실행하지 말고 먼저 나한테 보여줘.",
        "Sunucuda bir şey çalıştırmadan önce bana sor.",
        "run the tests before every push",
        # Statements.
        "Я всегда запускаю обучение через scripts/train.sh.",
        "Kantor kami di Jakarta, jadi semua jadwal pakai WIB.",
        "read CONTRIBUTING.md, I follow it to the letter",
    ],
)
def test_a_rule_or_a_statement_is_no_request(text: str) -> None:
    assert not is_request(text)


@pytest.mark.parametrize(
    ("rule", "task"),
    [
        ("Could you always answer in German?", "Can you tidy up utils.py?"),
        ("Можешь всегда отвечать по-русски?", "Можешь прочитать лог?"),
        ("¿Puedes responder siempre en español?", "¿Puedes leer el log?"),
        ("Her zaman Türkçe cevap verebilir misin?", "Logu okuyabilir misin?"),
        ("앞으로 항상 한국어로 답해 줄 수 있어?", "로그 좀 읽어 줄 수 있어?"),
    ],
)
def test_a_polite_question_states_a_lasting_rule_but_asks_for_a_task(rule: str, task: str) -> None:
    assert not asked_at(rule, len(rule)) and stated(rule)
    assert asked_at(task, len(task)) and not stated(task)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        # "By the way" with no comma before it turns from the request to a statement.
        ("ช่วยสรุปยอดขายให้หน่อย อ้อ ปีให้ใช้เป็น ค.ศ. นะ", "อ้อ ปีให้ใช้เป็น ค.ศ. นะ"),
        ("fix the flaky test btw we pin numpy below 2", "btw we pin numpy below 2"),
        ("lies das Log übrigens deployen wir nur dienstags", "übrigens deployen wir nur dienstags"),
        ("прочитай лог кстати мы деплоим по вторникам", "кстати мы деплоим по вторникам"),
        ("ログを読んでちなみに本番は火曜日だけです", "ちなみに本番は火曜日だけです"),
        # Thai ends a spoken sentence with a particle and a space: it states, then asks.
        ("ข้อมูลนี้เป็นปี 2560-2566 นะ ช่วยอ่านไฟล์แล้วสรุปให้หน่อย", "ข้อมูลนี้เป็นปี 2560-2566 นะ"),
    ],
)
def test_an_aside_after_a_request_is_no_request(text: str, says: str) -> None:
    request = text.replace(says, "")
    assert is_request(request) and not is_request(says)
    assert not is_request(text) and has_request(text)


@pytest.mark.parametrize(
    ("text", "first"),
    [
        # A letter of another script before a full stop is an abbreviation (Thai years
        # "ค.ศ.", Russian for a year, Greek "π.χ."), not a sentence's end.
        ("ปีให้ใช้เป็น ค.ศ. นะ ไม่ใช่ พ.ศ. ขอบคุณ", "ปีให้ใช้เป็น ค.ศ. นะ ไม่ใช่ พ.ศ. ขอบคุณ"),
        ("С 2024 г. мы считаем всё в евро. Спасибо.", "С 2024 г. мы считаем всё в евро"),
        ("Γράψε π.χ. ημερομηνίες ISO. Ευχαριστώ.", "Γράψε π.χ. ημερομηνίες ISO"),
        # A Latin capital letter still may end one ("plan B. Then …").
        ("We go with plan B. Then we ship.", "We go with plan B"),
    ],
)
def test_a_letter_of_another_script_before_a_full_stop_is_an_abbreviation(
    text: str, first: str
) -> None:
    assert sentences(text)[0].text == first


def test_full_stops_inside_names_and_numbers_do_not_end_a_sentence() -> None:
    text = "The staging DB is db-stg.internal:5433 and we ship 2025.1 — see config.yaml. Done."
    assert [s.text for s in sentences(text)] == [
        "The staging DB is db-stg.internal:5433 and we ship 2025.1 — see config.yaml",
        " Done",
    ]
    assert "The staging DB is db-stg.internal:5433 and we ship 2025.1" in stated(text)


_PIECES = [*"abc xyz.,;:?!¿؟।。，、—-\n", "ما ", "هل ", "क्या ", "몇 ", "mı ", "czy ", "if ", "or "]
_TEXT = st.lists(st.sampled_from([*_PIECES, "줘", "देखो", "run ", "никогда "]), max_size=60).map(
    "".join
)


@given(_TEXT, st.integers(min_value=0, max_value=220))
def test_any_text_splits_and_judges_without_failing(text: str, end: int) -> None:
    spans = sentences(text)
    assert all(0 <= s.start <= s.stop <= len(text) for s in spans)
    assert all(text[s.start : s.stop] == s.text for s in spans)
    for _, clause in statement_clauses(text):
        assert clause and clause in text
    asked_at(text, end)
    is_request(text)
    has_request(text)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Do we deploy on Fridays?", False),
        ("Does the export land on the 5th?", False),
        # Vietnamese "do" is "because": a reason, inside a question too.
        ("Do hết hạn rồi, bạn gia hạn giúp tôi được không?", True),
        ("Since we're on py3.12 now, can you drop the shim?", True),
    ],
)
def test_a_reason_marker_of_one_language_is_not_another_languages_question(
    text: str, reason: bool
) -> None:
    """Vietnamese "do" (because) opened every English "Do we …?" question, which then
    counted as said: only before Vietnamese words is it a reason."""
    assert bool(BECAUSE.search(text.casefold())) is reason
