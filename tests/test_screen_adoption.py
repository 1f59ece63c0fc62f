# Wordings in many languages are the point of these tests.
# ruff: noqa: RUF001
"""Whether the user's words adopt what came before them (``screen/adoption.py``): generated
wordings in many languages -- an assent or approval with a verb, a verb pointing at what
came before, "that is the rule we follow" -- adopt; the same negated, contrasted, asked, or
pointing at nothing ("use pandas") do not. The real turns are in
``test_screen_origin_turns.py``."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from ipymemory.screen.adoption import adopts, adopts_mention
from ipymemory.screen.lexicons import lexicon


@dataclass(frozen=True)
class Words:
    """One language's wordings: approvals and assents that open a reply, verbs with what
    they point at, "that is the rule we follow" sentences, and the negated forms."""

    approvals: tuple[str, ...]
    verbs: tuple[str, ...]  # "use", "remember" (imperative)
    pointers: tuple[str, ...]  # "that", "it" (after the verb)
    ours: tuple[str, ...]  # "that's the one we use"
    negated: tuple[str, ...]  # "don't use that", "but use it later" (with the verb)
    request: str  # a new request that adopts nothing ("summarise b.md")
    thing: str = "pandas"  # what a bare verb names: "use pandas" adopts nothing


WORDS = {
    "en": Words(
        ("great", "perfect", "thanks", "sounds good", "yes", "ok", "cool"),
        ("use", "remember", "keep", "follow", "stick with"),
        ("that", "it", "this", "that one"),
        ("That's the one we use", "This is the rule we follow from now on"),
        ("but don't use that", "but do not use it", "no, never use that"),
        "summarise b.md",
    ),
    "de": Words(
        ("super", "perfekt", "danke", "ja", "genau", "klingt gut"),
        ("verwende", "nimm", "merk dir", "befolge"),
        ("dies", "es", "dieses"),
        ("Das ist die Regel, die wir befolgen", "Genau das verwenden wir ab jetzt"),
        ("aber verwende es nicht", "nein, nimm das nicht"),
        "fasse b.md zusammen",
    ),
    "fr": Words(
        ("super", "parfait", "merci", "oui", "d'accord", "génial"),
        ("utilise", "retiens", "garde", "applique"),
        ("ça", "cela", "celui-ci"),
        ("C'est la règle qu'on suit", "C'est celle qu'on utilise"),
        ("mais n'utilise pas ça", "mais ne garde pas ça"),
        "résume b.md",
    ),
    "es": Words(
        ("genial", "perfecto", "gracias", "sí", "vale", "de acuerdo"),
        ("usa", "recuerda", "sigue", "aplica"),
        ("eso", "esto", "esa"),
        ("Esta es la regla que seguimos", "Eso es lo que usamos siempre"),
        ("pero no uses eso", "no, nunca sigas eso"),
        "resume b.md",
    ),
    "it": Words(
        ("ottimo", "perfetto", "grazie", "sì", "va bene", "esatto"),
        ("usa", "ricorda", "segui", "tieni"),
        ("quello", "questo", "questa"),
        ("Questa è la regola che seguiamo", "È quello che usiamo noi"),
        ("ma non usare quello", "no, non seguire questo"),
        "riassumi b.md",
    ),
    "pt": Words(
        ("ótimo", "perfeito", "obrigado", "sim", "isso", "valeu"),
        ("use", "lembre", "siga", "mantenha"),
        ("isso", "esse", "esta"),
        ("Essa é a regra que seguimos", "Isso é o que a gente usa"),
        ("mas não use isso", "não, nunca siga isso"),
        "resuma b.md",
    ),
    "ru": Words(
        ("отлично", "супер", "спасибо", "да", "точно", "хорошо"),
        ("используй", "запомни", "оставь", "следуй"),
        ("это", "его", "этого"),
        ("Это правило мы соблюдаем", "Это то, что мы используем"),
        ("но не используй это", "нет, не запоминай это"),
        "кратко перескажи b.md",
    ),
    "tr": Words(
        ("harika", "süper", "teşekkürler", "evet", "tamam", "aynen"),
        ("kullan", "hatırla", "uygula"),
        ("bunu", "şunu", "onu"),
        ("Biz bunu kullanıyoruz", "Bu kurala biz hep uyarız"),
        ("ama bunu kullanma", "hayır, asla bunu uygulama"),
        "b.md'yi özetle",
    ),
    "pl": Words(
        ("świetnie", "super", "dzięki", "tak", "dokładnie", "jasne"),
        ("zapamiętaj", "użyj", "stosuj", "trzymaj się"),
        ("tego", "tej", "tym"),
        ("Tej zasady się trzymamy", "Tego używamy my wszyscy"),
        ("ale nie używaj tego", "nie, nigdy nie stosuj tego"),
        "podsumuj b.md",
    ),
    "sv": Words(
        ("toppen", "perfekt", "tack", "ja", "precis", "låter bra"),
        ("använd", "följ", "kom ihåg", "spara"),
        ("det", "den", "detta"),
        ("Det är den regeln vi ska följa", "Den här använder vi alltid"),
        ("men använd inte det", "nej, följ aldrig det"),
        "sammanfatta b.md",
    ),
    "id": Words(
        ("bagus", "mantap", "terima kasih", "iya", "oke", "setuju"),
        ("pakai", "gunakan", "ingat", "ikuti"),
        ("itu", "ini", "yang itu"),
        ("Itu aturan yang kita ikuti", "Ini yang kami pakai"),
        ("tapi jangan pakai itu", "tidak, jangan ikuti itu"),
        "ringkas b.md",
    ),
    "vi": Words(
        ("tuyệt", "hoàn hảo", "cảm ơn", "vâng", "đúng rồi", "ok"),
        ("dùng", "nhớ", "giữ", "làm theo"),
        ("cái đó", "cái này", "điều này"),
        ("Đó là quy tắc chúng ta làm theo", "Đây là cái mình dùng"),
        ("nhưng đừng dùng cái đó", "không, đừng làm theo cái này"),
        "tóm tắt b.md",
    ),
    "ja": Words(
        ("いいね", "完璧", "ありがとう", "はい", "了解", "うん"),
        ("使って", "覚えて", "従って"),
        ("それ", "これ"),
        ("これが私たちの従うルールです", "それが僕らの使う方法だ"),
        ("でもそれは使わないで", "いや、それは覚えないで"),
        "b.mdを要約して",
    ),
    "zh": Words(
        ("太好了", "完美", "谢谢", "好的", "对", "没错"),
        ("记住", "使用", "遵守", "采用"),
        ("这个", "那个", "它"),
        ("这就是我们要遵守的规则", "那是我们一直采用的方法"),
        ("但是不要使用这个", "不，别记住那个"),
        "总结一下 b.md",
    ),
    "ko": Words(
        ("좋네요", "완벽", "고마워", "네", "응", "좋아요"),
        ("기억해", "사용해", "적용해"),
        ("이거", "그거"),
        ("이게 우리가 따르는 규칙이야", "그게 저희가 사용하는 방식입니다"),
        ("하지만 그거 사용해 말고", "근데 이거 기억해 말고"),
        "b.md 요약해 줘",
    ),
    "bn": Words(
        ("দারুণ", "চমৎকার", "ধন্যবাদ", "হ্যাঁ", "ঠিক আছে"),
        ("মনে রাখো", "ব্যবহার করো", "মেনে চলো"),
        ("এটা", "এটি"),
        ("এটাই আমরা মেনে চলব", "এই শৈলী আমরা মেনে চলবো"),
        ("কিন্তু এটা ব্যবহার করো না", "না, এটা মনে রাখো না"),
        "b.md সংক্ষেপ করো",
    ),
    "fi": Words(
        ("hienoa", "täydellistä", "kiitos", "kyllä", "joo"),
        ("käytä", "muista", "noudata", "tallenna"),
        ("sitä", "tätä", "se"),
        ("Tämä on sääntö, jota me noudatamme", "Tämä sääntö on se jota me käytämme"),
        ("mutta älä käytä sitä", "ei, älä muista sitä"),
        "tiivistä b.md",
    ),
    "hu": Words(
        ("szuper", "remek", "köszönöm", "igen", "rendben"),
        ("használd", "kövesd", "jegyezd meg", "tartsd"),
        ("ezt", "azt", "ugyanezt"),
        ("Ez az a szabály, amit mi követünk", "Ezt használjuk mi mindig"),
        ("de ne használd ezt", "nem, ne kövesd ezt"),
        "foglald össze a b.md-t",
    ),
    "tl": Words(
        ("ayos", "galing", "salamat", "oo", "sige"),
        ("gamitin", "sundin", "tandaan"),
        ("iyan", "ito", "iyon"),
        ("Ito ang patakaran na sinusunod natin", "Iyan ang gagamitin natin"),
        ("pero huwag gamitin iyan", "hindi, huwag sundin iyan"),
        "ibuod ang b.md",
    ),
}

_SEPARATORS = (", ", ": ", " - ", ", ", "! ")


def _cased(text: str, upper: bool) -> str:
    return text[:1].upper() + text[1:] if upper else text


@st.composite
def adopting(draw: st.DrawFn) -> str:
    """An approval or assent, then a verb pointing at what came before; or the verb alone;
    or the user's "that is the rule we follow"."""
    lang = draw(st.sampled_from(sorted(WORDS)))
    w = WORDS[lang]
    verb, pointer = draw(st.sampled_from(w.verbs)), draw(st.sampled_from(w.pointers))
    said = f"{verb} {pointer}"
    form = draw(st.sampled_from(("approval", "bare", "ours")))
    if form == "approval":
        said = draw(st.sampled_from(w.approvals)) + draw(st.sampled_from(_SEPARATORS)) + said
    elif form == "ours":
        said = draw(st.sampled_from(w.ours))
    return _cased(said, draw(st.booleans())) + draw(st.sampled_from(("", ".", "!", "。")))


@st.composite
def not_adopting(draw: st.DrawFn) -> str:
    """The same words negated or contrasted, asked, pointing at nothing ("use pandas"), or
    a new request after the approval."""
    lang = draw(st.sampled_from(sorted(WORDS)))
    w = WORDS[lang]
    approval = draw(st.sampled_from(w.approvals)) + draw(st.sampled_from((", ", " ")))
    verb, pointer = draw(st.sampled_from(w.verbs)), draw(st.sampled_from(w.pointers))
    said = draw(
        st.sampled_from(
            (
                approval + draw(st.sampled_from(w.negated)),
                draw(st.sampled_from(w.negated)),
                f"{verb} {w.thing}",
                f"{verb} {pointer}?",
                approval + w.request,
            )
        )
    )
    return _cased(said, draw(st.booleans()))


@given(adopting())
def test_an_approval_or_a_pointed_verb_adopts_in_any_language(said: str) -> None:
    assert adopts(said), said


@given(not_adopting())
def test_a_negated_contrasted_asked_or_new_request_adopts_nothing(said: str) -> None:
    assert not adopts(said), said


@pytest.mark.parametrize(
    "said",
    [
        "Great, use that quick command whenever you run geokit's tests.",
        "Det är den regeln vi ska följa i alla analyser.",
        "Qual è la scadenza per la domanda? Segnatela, partecipiamo di sicuro.",
        "ভালো। এখন থেকে থিসিসের সব লেখায় এই শৈলী মেনে চলবে।",
        "yes",
        "Yes, exactly!",
        "да, используй это везде",
        "evet, bundan sonra hep bunu kullan",
        "haan, yahi use karo",
        "sì, usa queste impostazioni ovunque",
        "对，就用这个",
        "좋아요, 그걸로 해",
        "Bagus, guna itu.",
        "Salamat, gamitin mo iyan.",
        "ممتاز، استخدمه دائما",
        "מעולה, תשתמש בזה",
    ],
)
def test_what_the_held_out_turns_said_adopts(said: str) -> None:
    assert adopts(said)


@pytest.mark.parametrize(
    "said",
    [
        "use pandas",
        "Thanks!",  # thanks alone is no adoption; "yes" alone is
        "Thanks, now use polars for the rest",  # an approval, a verb pointing at nothing
        "ok, take a look at this",
        "yes, and also summarise b.md",
        "да, но сначала объясни, что такое cov-fail-under",
        "si usa ruff anche per i notebook",  # "one uses", not "yes, use"
        "Summarise this and keep it short",  # a request for now
        "Remember this: I deploy on Fridays.",  # points at what follows
        "Remember that we deploy on Fridays.",  # a clause of its own, no object
        "Keep in mind that prod is frozen until Monday",
        "另外记住：这个项目里阈值的任何改动都必须先走评审",
        "This script will use the GPU",  # nobody of the user's follows
        "네트워크 설정을 봐줘",  # "네" opens a word, no assent
        "এটা মেনে চলবে না",  # negated after the verb
        "Should we use that?",
    ],
)
def test_what_adopts_nothing(said: str) -> None:
    assert not adopts(said)


@pytest.mark.parametrize(
    ("sentence", "name", "adopted"),
    [
        ("follow style.md for every report", "style.md", True),
        ("write it the way readme.md says", "readme.md", True),
        ("hesapla, config.yaml'a göre", "config.yaml", True),
        ("a b.md szerint dolgozz", "b.md", True),
        ("kirjoita ohje.md:n mukaan", "ohje.md", True),
        ("docs/শৈলী.md অনুযায়ী লেখো", "docs/শৈলী.md", True),
        ("ikut panduan.md untuk semua laporan", "panduan.md", True),
        ("don't follow style.md", "style.md", False),
        ("follow readme.md, not style.md", "style.md", False),
        ("what is in style.md", "style.md", False),
    ],
)
def test_a_file_named_beside_words_that_adopt_it(sentence: str, name: str, adopted: bool) -> None:
    start = sentence.index(name)
    assert adopts_mention(sentence, start, start + len(name)) is adopted


#: The languages the screen reads and those heldout8 used beside them.
EXTRA = {"bn", "ms", "tl", "fi", "hu"}


def test_every_adoption_concept_covers_every_language() -> None:
    """(The file as written: its loader checks only the 26 languages it lists.)"""
    raw = yaml.safe_load(
        resources.files("ipymemory.screen").joinpath("lexicons.yaml").read_text("utf-8")
    )
    wanted = set(raw["languages"]) | EXTRA
    for name, by_language in raw["concepts"].items():
        if not name.startswith("adopt_"):
            continue
        assert set(by_language) >= wanted, name
        # (objects before the verb, relative words after a comma: only where they are)
        if name not in ("adopt_object", "adopt_which"):
            assert all(by_language[lang] for lang in wanted), name
    assert lexicon().languages <= wanted
