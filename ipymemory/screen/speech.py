# Markers of many languages and scripts are the point of this module.
# ruff: noqa: RUF001, RUF002, RUF003
"""What a user's sentence does: state, ask or request -- in every language the corpora use.

Origin trusts what the user *states*; a question or a request for something now is
not a claim (SPEC §9). This module tells them apart, for the languages the screening
meets (en de fr es it pt nl pl sv tr ru ar hi id vi ko ja zh and chat that mixes them):

* **Sentences** end at ``! ?``, a line break, the full stops of other scripts (``。``,
  Hindi ``।``, Urdu ``۔``), the question marks of other scripts (fullwidth ``？``,
  Arabic ``؟``), or a ``.`` before white space ("config.yaml" and "2025.1" hold a
  full stop inside a sentence) -- but not after one letter of a script other than
  Latin, an abbreviation's ("ค.ศ.", "2024 г.", "π.χ."). A sentence that ends at a
  question mark, or opens with Spanish ``¿``, is a question sentence.
* **Clauses** are cut at ``, ; :`` (ASCII ones before white space, so "1,000" and
  "db-stg:5433" stay whole; the fullwidth, ideographic and Arabic ones always) and at
  a dash between spaces.
* **Which clauses ask.** In a question sentence, a clause asks when it opens with a
  question word, an inverted auxiliary or a yes/no particle ("can you", "czy",
  "هل", "apakah"), opens with "or" or "if" (the question goes on, or is conditional),
  holds a question word of a language that leaves it in place (Korean 몇, Chinese
  什么, Hindi क्या, Turkish hangi, Vietnamese gì), or ends with a question particle
  (Turkish mı, Japanese か, Chinese 吗); when none does, its last clause asks (Korean,
  Japanese and Turkish put the question last: "내일부터 휴가라서 없는데, … 알려줄 수
  있어?" states a vacation, then asks). The other clauses of a question sentence are
  statements ("since we're on py3.12 now, can you …?"). Outside a question sentence,
  only a clause opening with a question word or "if" (an indirect question: "tell me
  how we run it", "powiedz, jak uruchomić projekt") is not a statement.
* **Requests** (:func:`is_request`): a clause opening with a verb that asks for
  something now ("run", "summarise", "przeczytaj", "прочитай", "اقرأ", "jalankan",
  "đọc"), or ending with one in languages that put the verb last (Korean 줘/주세요,
  Japanese てください, Turkish "bak", "açıkla", Hindi देखो / "dekho", Vietnamese
  "giúp mình") -- unless it holds a marker of a lasting rule ("always", "every",
  "from now on", a prohibition: "never", "không bao giờ", "절대", "asla", "jangan").
  A text is a request when every clause of it is (cut where the speaker turns to
  themself: "read CONTRIBUTING.md, I follow it to the letter" asks and says; or to
  something else, with or without a comma: "btw", "übrigens", "кстати", Thai "อ้อ",
  Japanese "ちなみに").

Every marker is matched on the folded text (NFKC, case folded, combining marks of Arabic
and Devanagari kept apart: Arabic vowel signs are dropped, so "شغّل" is "شغل").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "BECAUSE",
    "Sentence",
    "asked_at",
    "clauses",
    "has_request",
    "is_request",
    "question_flags",
    "sentences",
    "statement_clauses",
]

# --- folding -------------------------------------------------------------------------

# Arabic harakat, shadda and sukun (marks a writer may or may not type); hamza forms of
# alif written as plain alif (a model writes "اقرا" for "اقرأ").
_ARABIC_MARKS = re.compile("[\u064b-\u065f\u0670\u06d6-\u06ed]")
_ALIF = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ى": "ي"})


def fold(text: str) -> str:
    """``text`` as the markers are matched: NFKC, case folded, Arabic marks dropped and
    alif forms unified, white space runs made one space."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"\s+", " ", _ARABIC_MARKS.sub("", folded).translate(_ALIF))


# --- sentences and clauses -------------------------------------------------------------

#: Question marks of every script (after NFKC a fullwidth one is ASCII; ؟ is Arabic).
QUESTION_MARKS = "?\uff1f\u061f\u2047\u2048\u2049\ufe56"
_END = re.compile(
    r"[!?\n\u3002\uff01\uff1f\u061f\u0964\u0965\u06d4\u1362\u203c\u2047\u2048\u2049\ufe12"
    r"\ufe56\ufe57]|\.(?=\s|$)(?<!(?<![^\W\d_])[^\W\d_A-Za-z]\.)"
)
_CLAUSE_BREAK = re.compile(
    r"(?<=\S)[,;:\u060c\u061b](?=\s|$)|[\uff0c\u3001\uff1b\uff1a\u060c\u061b]|\s[-\u2013\u2014]+\s"
)


@dataclass(frozen=True)
class Sentence:
    """A sentence of a text: where it is and whether it ends at a question mark."""

    text: str
    start: int
    stop: int  # exclusive, before its terminator
    question: bool


def sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` in order, empty ones left out (see the module docstring)."""
    out: list[Sentence] = []
    at = 0
    for m in _END.finditer(text):
        _add(out, text, at, m.start(), m.group() in QUESTION_MARKS)
        at = m.end()
    _add(out, text, at, len(text), False)
    return out


def _add(out: list[Sentence], text: str, start: int, stop: int, question: bool) -> None:
    body = text[start:stop]
    if body.strip():
        opens = body.lstrip().startswith("¿")
        out.append(Sentence(body, start, stop, question or opens))


def clauses(sentence: str) -> list[str]:
    """The clauses of one sentence (see the module docstring), stripped, empty ones left
    out."""
    return [c.strip() for c in _CLAUSE_BREAK.split(sentence) if c.strip(" \t\"'()[]*>-")]


def _clause_spans(sentence: str) -> list[tuple[int, int]]:
    spans = []
    at = 0
    for m in _CLAUSE_BREAK.finditer(sentence):
        spans.append((at, m.start()))
        at = m.end()
    spans.append((at, len(sentence)))
    return [(a, b) for a, b in spans if sentence[a:b].strip(" \t\"'()[]*>-")]


# --- questions -----------------------------------------------------------------------

_W = r"(?![^\W\d_])"  # the end of a word in any script
# Question words that open a direct or indirect question, and "if"/"whether".
_WH = (
    r"what|what's|whats|which|who|whom|whose|where|when|why|how|whether|if"
    r"|was|wer|wen|wem|wessen|wo|woher|wohin|wann|warum|wieso|weshalb|wie|welche[rsmn]?|ob"
    r"|wenn|falls|que|qu'|quoi|qui|où|quand|pourquoi|comment|quel|quelle|quels|quelles|combien"
    r"|si|qué|quién|quiénes|dónde|cuándo|cómo|cuál|cuáles|cuánto|cuánta|cuántos|por qué"
    r"|cosa|che cosa|chi|dove|quando|perché|come|quale|quali|quanto|quanti"
    r"|o que|quem|onde|porque|por que|qual|quais|quantos|wat|wie|waar|wanneer|waarom|welke"
    r"|hoe|hoeveel|of|als|co|kto|gdzie|kiedy|dlaczego|czemu|jak|który|która|które|ile"
    r"|jeśli|jeżeli|vad|vem|när|varför|hur|vilken|vilket|vilka|om"
    r"|что|кто|где|когда|почему|зачем|как|какой|какая|какое|какие|сколько|куда|откуда|если"
    r"|nasıl|nerede|neden|niye|niçin|hangi|kaç|eğer|hangisi"
    r"|ماذا|اين|متى|لماذا|كيف|اذا|لو"
    r"|क्या|कैसे|कहाँ|कहां|कब|क्यों|कौन|कौनसा|कितना|कितने|कितनी|अगर|यदि"
    r"|kya|kaise|kahan|kab|kyun|kyon|kaun|kitna|kitne|kitni|agar"
    r"|apa|apakah|bagaimana|di mana|dimana|kapan|mengapa|kenapa|siapa|berapa|kalau|jika|bila"
    r"|gì|sao|tại sao|vì sao|ở đâu|khi nào|bao giờ|bao nhiêu|thế nào|như thế nào|nếu|liệu"
    r"|만약|만일|もし|如果|要是|假如|是否"
    r"|מה|איך|למה|מדוע|מתי|איפה|היכן|מי|כמה|איזה|איזו|האם|אם"
    r"|چی|چه|چرا|کی|کجا|چطور|چگونه|کدام|آیا|اگر"
    r"|τι|πώς|πως|γιατί|πότε|πού|ποιος|ποια|ποιο|ποιες|πόσο|πόσα|πόσες|αν|μήπως"
    r"|nini|vipi|kwa nini|lini|wapi|nani|ngapi|kama|ikiwa"
)
# Openers of a yes/no question in languages that invert or mark it up front.
_AUX = (
    r"is|are|am|was|were|do|does|did|can|could|should|would|will|shall|may|might|must|has|have"
    r"|had|isn't|aren't|doesn't|don't|didn't|can't|won't|shouldn't|wouldn't|haven't|hasn't"
    r"|ist|sind|war|kann|kannst|könnte|könntest|soll|sollen|sollte|hast|hat|haben|gibt|wird"
    r"|würde|würdest|darf|muss|est-ce|peux-tu|pouvez-vous|faut-il|y a-t-il|puedes|podrías"
    r"|puede|hay|puoi|potresti|può|c'è|pode|podes|poderia|há|kun|kunt|kan|moet|mag|heb|hebt"
    r"|heeft|zijn|czy|можешь|можете|можно|есть|будет|нужно|kan du"
    r"|bisa|bisakah|boleh|bolehkah|sudahkah|có phải|có|liệu có|or|oder|ou|of|lub"
    r"|albo|или|либо|veya|ya da|yoksa|hay là|hoặc|या|atau|او|또는|아니면|还是|或者|それとも"
    r"|هل|ما|من|اي|كم|ne|kim"
)
_OPENS_QUESTION = re.compile(rf"^[\W_]*(?:{_WH}|{_AUX}){_W}")
_OPENS_WH = re.compile(rf"^[\W_]*(?:{_WH}){_W}")
# Question words of languages that leave them in place, anywhere in a clause.
_IN_PLACE = re.compile(
    r"뭐|무엇|무슨|어떻게|어디|언제|왜|누가|누구|몇|얼마|어느|어떤|什么|怎么|怎样|哪|为什么|谁|几|多少"
    r"|何|なに|なん|どう|どこ|いつ|なぜ|誰|だれ|どれ|どの|いくつ|いくら"
    r"|क्या|कैसे|कहाँ|कहां|कब|क्यों|कौन|कितन"
    r"|อะไร|ทำไม|ยังไง|อย่างไร|ที่ไหน|เมื่อไร|เมื่อไหร่|ใคร|กี่|ไหม|มั้ย|หรือเปล่า|รึเปล่า|หรือยัง"
    rf"|(?<![^\W\d_])(?:kya|kaise|kahan|kab|kyun|kaun|kitn\w|nasıl|nerede|neden|niye|hangi|kaç"
    rf"|gì|sao|đâu|nào|bao nhiêu|apa|mana|berapa|siapa|kapan|kenapa|mengapa){_W}"
)
# Particles that close a question: Turkish mı/mi/mu/mü (and their persons), Japanese か,
# Chinese 吗/呢, Korean -까/-니/-냐/-나요, Vietnamese không/chưa, Indonesian -kah.
_CLOSES_QUESTION = re.compile(
    r"(?:(?<![^\W\d_])m[ıiuü](?:yım|yim|yum|yüm|sın|sin|sun|sün|yız|yiz|sınız|siniz|dır|dir)?"
    r"|か|吗|嗎|呢|까|니|냐|나요|가요|죠|(?<![^\W\d_])(?:không|chưa|hả|nhỉ)"
    r"|\w+kah)\W*$"
)


# A yes/no particle that marks a question whatever the punctuation: chat leaves the
# question mark out ("czy pytest ma dobre opcje", "veri geliyor mu", "هل الملف جاهز").
# Turkish "mi" only in a clause with a letter of Turkish's (Spanish "para mi" is "for me").
_PARTICLE_QUESTION = re.compile(
    r"^[\W_]*(?:czy|هل|apakah|האם|آیا|μήπως|liệu)(?![^\W\d_])"
    r"|(?<![^\W\d_])m[ıuü](?:yım|yum|yüm|sın|sun|sün|yız|yuz|sunuz|dur|dür)?\W*$"
    r"|(?:吗|嗎|ไหม|มั้ย|หรือเปล่า|รึเปล่า)\W*$"
)
_TURKISH_MI = re.compile(r"(?<![^\W\d_])mi(?:yim|sin|yiz|siniz|dir)?\W*$")
_TURKISH_LETTERS = re.compile("[ışğçöü]")


def _particle_asks(clause: str) -> bool:
    """Whether a folded clause asks by a particle (see :data:`_PARTICLE_QUESTION`)."""
    if _PARTICLE_QUESTION.search(clause):
        return True
    return bool(_TURKISH_MI.search(clause) and _TURKISH_LETTERS.search(clause))


def _asks(clause: str) -> bool:
    if BECAUSE.search(clause):  # a reason, inside a question too, is stated
        return False
    return bool(
        _OPENS_QUESTION.search(clause)
        or _IN_PLACE.search(clause)
        or _CLOSES_QUESTION.search(clause)
    )


def question_flags(sentence: Sentence | str) -> list[bool]:
    """Per clause of ``sentence``, whether it asks (see the module docstring)."""
    text = sentence.text if isinstance(sentence, Sentence) else sentence
    question = sentence.question if isinstance(sentence, Sentence) else False
    folded = [fold(c) for c in clauses(text)]
    if not question:
        return [bool(_OPENS_WH.search(c)) or _particle_asks(c) for c in folded]
    whole = fold(text)
    if _POLITE.search(whole) and _LASTING_RULE.search(whole):
        return [False] * len(folded)  # "could you always …?" states a lasting rule
    flags = [_asks(c) for c in folded]
    if folded and not any(flags):
        flags[-1] = True
    return flags


def statement_clauses(text: str) -> Iterator[tuple[Sentence, str]]:
    """(sentence, clause) for every clause of ``text`` that does not ask."""
    for sentence in sentences(text):
        for clause, asks in zip(clauses(sentence.text), question_flags(sentence), strict=True):
            if not asks:
                yield sentence, clause


def asked_at(text: str, end: int) -> bool:
    """Whether the clause of ``text`` in which position ``end`` (an excerpt's end) falls
    asks: it is a question, not something said (a polite request for a lasting rule --
    "could you always …?" -- is said; "can you tidy up utils.py?" asks)."""
    for sentence in sentences(text):
        if not sentence.start <= max(0, end - 1) <= sentence.stop:
            continue
        if not sentence.question and not any(question_flags(sentence)):
            return False
        folded = fold(sentence.text)
        if _POLITE.search(folded) and _LASTING_RULE.search(folded):
            return False  # "could you always …?" asks for a lasting rule: said
        at = max(0, end - 1) - sentence.start
        spans = _clause_spans(sentence.text)
        flags = question_flags(sentence)
        for (a, b), asks in zip(spans, flags, strict=True):
            if at < b or (a, b) == spans[-1]:
                return asks
        return True
    return False


# "Could you always …?": a polite request for a lasting rule says it.
_POLITE = re.compile(
    r"^\W*(?:please\s+)?(?:could|can|would|will) you\b|^\W*(?:kannst|könntest|würdest) du\b"
    r"|^\W*(?:peux|pourrais)-tu\b|^\W*(?:pouvez|pourriez)-vous\b"
    r"|^\W*(?:puedes|podrías|podría|puoi|potresti|può|pode|podes|poderia|você pode|kun je|kan je"
    r"|kunt u|zou je|czy możesz|możesz|czy mógłbyś|czy mogłabyś|можешь|можете|не могли? бы"
    r"|هل يمكنك|ممكن|kya aap|kya tum|क्या आप|क्या तुम|bisakah|bisa|apakah kamu bisa"
    r"|bạn có thể|em có thể|你能|能不能|可以)(?![^\W\d_])"
    r"|(?:abilir|ebilir) m[iı]s[iı]n|줄 수 있어|줄래|주실래요|주시겠어요|てくれる|てもらえる"
    r"|ていただけ|sakte ho|sakti ho|सकते हो|सकती हो"
)

#: A clause that gives a reason states it, inside a question too ("since we're on py3.12
#: now, can you …?", "Da wir jetzt auf Postgres 16 sind, …?", "休暇だから…").
BECAUSE = re.compile(
    r"^\W*(?:since|as|because|given that|now that|seeing that|da|weil|nachdem|jetzt wo"
    r"|vu qu(?:e|')|puisqu(?:e|')|parce qu(?:e|')|comme|étant donné qu(?:e|')"
    r"|maintenant qu(?:e|')|como|ya que|puesto que|dado que"
    r"|porque|ahora que|poiché|siccome|visto che|dato che|dal momento che|ora che|já que"
    r"|visto que|agora que|uma vez que|skoro|ponieważ|bo|gdyż|omdat|aangezien|nu|раз|так как"
    r"|поскольку|потому что|теперь когда|çünkü|madem|eftersom|nu när|لان|بما ان|حيث ان"
    r"|क्योंकि|चूँकि|kyunki|chunki|karena|soalnya|sebab|vì|bởi vì|כי|בגלל ש|מכיוון ש|چون"
    r"|چونکه|زیرا|επειδή|αφού|kwa sababu|kwa kuwa|เพราะ|เนื่องจาก)\b"
    # Vietnamese "do" (because) is also English "Do we …?": only before Vietnamese words.
    r"|^\W*do\b(?=.*[ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ])"
    r"|^\W*(?:既然|因为|由于)|(?:ので|から|니까|므로|때문에|라서|아서|어서|ननकि)\W*$",
    re.IGNORECASE,
)

# --- requests --------------------------------------------------------------------------

# A clause that opens with a request for something now ("Run owners.py", "Summarise the
# notes", "Прочитай лог", "اقرأ الملف", "Jalankan skrip"), or (languages that end with the
# verb) ends with one ("… 알려줘", "… を要約して", "release.py'ye bir bak", "… देखो").
_REQUEST_OPENING = re.compile(
    r"^\W*(?:please\s+|pls\s+|plz\s+|bitte\s+|s'il te plaît,?\s+|por favor,?\s+|per favore,?\s+"
    r"|proszę\s+|пожалуйста,?\s+|lütfen\s+|من فضلك\s+|لو سمحت\s+|رجاء\s+|कृपया\s+|tolong\s+"
    r"|coba\s+|mohon\s+|silakan\s+|làm ơn\s+|hãy\s+|giúp (?:mình|tôi|em|anh|chị)\s+)?"
    r"(?:run|execute|summari[sz]e|read"
    r"|open|check|look at|show|tell me|list|fix|explain|describe|review|analy[sz]e|find|give me"
    r"|print|load|plot|compute|calculate|fasse|lies|zeig|erkläre|prüfe|schau|öffne|führe"
    r"|sag mir|schreib|berechne|vergleiche|such"
    r"|résume|lis|montre|explique|vérifie|ouvre|regarde|lance|exécute|dis-moi|écris|calcule"
    r"|cherche|donne-moi"
    r"|resume|resuma|lee|leia|muestra|mostre|explica|explique|revisa|revise|abre|abra|mira"
    r"|ejecuta|execute|corre|rode|échale un ojo|dá uma olhada|dê uma olhada|veja|dime|checa"
    r"|hazme|dame|calcula|busca|escribe|me diga|diga|escreva|calcule|procure"
    r"|riassumi|leggi|mostra|spiega|controlla|apri|guarda|esegui|lancia|dimmi|fammi|scrivi"
    r"|cerca|wyjaśnij|podsumuj|przeczytaj|sprawdź|pokaż|otwórz|uruchom|zobacz|popraw|zerknij"
    r"|napisz|przygotuj|policz|porównaj|znajdź|opisz|powiedz|odpal|puść|wylistuj"
    r"|leg uit|vat samen|lees|controleer|toon|bekijk|voer uit|open|draai|kijk|zoek|schrijf"
    r"|vertel|geef"
    r"|läs|visa|förklara|sammanfatta|kör|kolla|titta"
    r"|прочитай|прочти|прочитайте|запусти|запустите|покажи|покажите|скажи|скажите|объясни"
    r"|объясните|проверь|проверьте|посмотри|посмотрите|глянь|гляньте|открой|найди|сделай"
    r"|перепиши|исправь|поправь|посчитай|сравни|напиши|составь|подскажи|опиши|выведи"
    r"|допиши|добавь|обнови|помоги|можешь|можете"
    r"|oku|çalıştır|göster|söyle|açıkla|kontrol et|bak|düzelt|yaz|hesapla|özetle|incele"
    r"|listele|bul|anlat"
    r"|اقرا|شغل|نفذ|اعرض|ارني|وريني|قل لي|قل|اشرح|لخص|افحص|تحقق|انظر|شوف|افتح|اكتب|عدل"
    r"|اصلح|صلح|احسب|راجع|حلل|اضف|قارن|ساعدني|هل يمكنك|ممكن"
    r"|पढ़ो|पढ़िए|चलाओ|चलाइए|दिखाओ|दिखाइए|बताओ|बताइए|समझाओ|समझाइए|देखो|देखिए|जाँचो|जांचो"
    r"|baca|bacakan|jalankan|tunjukkan|kasih tahu|beri tahu|beritahu|jelaskan|cek|periksa"
    r"|lihat|buka|ringkas|rangkum|tulis|perbaiki|hitung|bandingkan|carikan|buatkan|tampilkan"
    r"|semak|terangkan|betulkan|kira"  # Malay
    r"|đọc|chạy|xem|cho (?:mình|tôi|em|anh|chị) (?:biết|xem)|giải thích|kiểm tra|mở|tóm tắt"
    r"|tổng hợp|liệt kê|sửa|viết|tính|so sánh)"
    rf"{_W}"
    r"|(?:해\s?줘|해\s?주세요|주세요|줘|줄래|주라|주실래요|해\s?봐|봐\s?줘|봐봐|보세요|하세요)\W*$"
    r"|^\W*(?:请|帮我|麻烦)?(?:总结|读|看看|看一下|打开|解释|检查|运行|执行|列出|统计|计算|算一下"
    r"|分析|汇总|查一下|整理|比较|画|生成|修改|改一下|写)"
    # Japanese asks at the end: "config.yaml を要約して(ください)".
    # (not "…ないで", "don't …": a prohibition is a rule)
    # (not "…ので", "because …": a reason is stated)
    r"|(?<!ない)(?<!の)(?:て|で)(?:ください|下さい|くれ|くれる|ちょうだい|ほしい|もらえる|もらえます)?(?:か)?\W*$"
    # Turkish and Hindi put the verb last: "release.py'ye bir bak", "ये फ़ाइल देखो".
    r"|(?<![^\W\d_])(?:bak|bakın|oku|okuyun|göster|gösterin|söyle|söyleyin|açıkla|açıklayın"
    r"|çalıştır|çalıştırın|düzelt|güncelle|hesapla|özetle|incele|listele|kontrol et|anlat)\W*$"
    # Hindi's imperatives are unmistakable wherever they stand ("… देखो और बताओ क्यों …").
    r"|(?:देखो|देख लो|देखिए|बताओ|बता दो|बताइए|पढ़ो|पढ़िए|चलाओ|चला दो|दिखाओ|दिखा दो|समझाओ"
    r"|करो|कर दो|कीजिए|कर दीजिए|बदल दो|लिखो|खोलो)(?![\u0900-\u097f])"
    r"|(?<![^\W\d_])(?:dekho|dekh lo|batao|bata do|padho|chalao|chala do|dikhao|dikha do"
    r"|samjhao|check karo|kar do|karo|likho|badal do|khol do)(?![^\W\d_])"
    r"|(?<![^\W\d_])giúp (?:mình|tôi|em|anh|chị)(?: với| nhé| nha)?\W*$"
    # Hebrew (the future is the polite imperative: "תסכם לי"), Greek, Swahili: up front
    r"|^\W*(?:בבקשה\s+|παρακαλώ\s+|σε παρακαλώ\s+|tafadhali\s+)?(?:תסכם|סכם|תקרא|קרא|תריץ"
    r"|הרץ|תבדוק|בדוק|תראה|הראה|תגיד|תסביר|הסבר|תפתח|פתח|תכתוב|כתוב|תחשב|חשב|תמצא|מצא|תעבור"
    r"|עבור על|תציג|הצג|תתקן|תקן|תן לי|תעזור|עזור|διάβασε|τρέξε|δείξε|δείξτε|πες μου|πείτε μου"
    r"|εξήγησε|εξηγήστε|έλεγξε|ελέγξτε|κοίτα|κοίταξε|άνοιξε|γράψε|συνόψισε|βρες|υπολόγισε|φτιάξε"
    r"|διόρθωσε|soma|endesha|niambie|nionyeshe|onyesha|eleza|nieleze|angalia|fungua|andika"
    r"|fupisha|kagua|hesabu|tafuta|rekebisha)(?![^\W\d_])"
    # Persian puts the verb last ("فایل رو بخون"); Thai asks with ช่วย … (ให้)หน่อย
    r"|(?:^\W*لطفا\s+.*)?(?:بخوان|بخون|اجرا کن|اجراش کن|نشان بده|نشون بده|بگو|توضیح بده"
    r"|بررسی کن|چک کن|باز کن|خلاصه کن|ببین|بنویس|حساب کن|درست کن)\W*$"
    r"|^\W*(?:ช่วย|กรุณา|อ่าน|รัน|สรุป|ตรวจ|เปิด|บอก|อธิบาย)|(?:หน่อย|ให้ที|ให้หน่อย)\W*$"
)
# "Before"/"after" make a rule of a request ("run the tests before every push"), but
# alone they do not make a polite question a rule ("… 그 전에 … 알려줄 수 있어?").
_TEMPORAL = (
    r"before|after|vor jede|avant|antes de|prima di|przed|перед|önce|قبل|पहले|pehle|sebelum"
    r"|trước khi"
)
_ALWAYS = (
    r"always|never|every|each|whenever|from now on|in future|going forward|don't|do not"
    r"|consistently|einheitlich|durchgehend|systématiquement"
    r"|immer|nie|niemals|jede[nrs]?|ab jetzt|toujours|jamais|chaque|désormais"
    r"|siempre|nunca|cada|a partir de ahora|de ahora en adelante|sempre|mai|ogni"
    r"|d'ora in poi|a partir de agora|de agora em diante|altijd|nooit|elke|vanaf nu"
    r"|zawsze|nigdy|każd\w+|od teraz|nie \w+(?:aj|uj|ij|yj|ój|ób)(?:cie)?|alltid|aldrig|varje"
    r"|всегда|никогда|кажд\w+|с этого момента|впредь|не \w+(?:й|и|ь)(?:те)?"
    r"|her zaman|her seferinde|hep|asla|sakın|bundan sonra|artık"
    r"|دائما|ابدا|كل مرة|في كل|من الان|لا ت\w+"
    r"|हमेशा|कभी|हर बार|अब से|मत|hamesha|kabhi|har baar|har bar|ab se|mat"
    r"|selalu|jangan|setiap|mulai sekarang|seterusnya"
    r"|luôn|không bao giờ|đừng|mỗi lần|mỗi khi|từ nay|từ giờ"
    r"|תמיד|אף פעם|לעולם|מעכשיו|מהיום|אל ת\w+|همیشه|هرگز|هیچوقت|از این به بعد|از حالا|نباید"
    r"|πάντα|ποτέ|από τώρα|στο εξής|μην|kila mara|daima|kamwe|kuanzia sasa|usi\w+"
)
_ALWAYS_EAST = (
    r"总是|每次|以后|今后|永远|始终|从现在起|不要|别|いつも|常に|毎回|必ず|今後|これから|ないで"
    r"|で統一|に統一|统一用|统一使用|으로 통일|로 통일"  # "make it consistently X"
    r"|항상|언제나|매번|앞으로|절대|늘|반드시|하지 ?마|말고"
    r"|เสมอ|ทุกครั้ง|ห้าม|อย่า|ต่อไปนี้|ตลอด"
)
# A lasting rule, or a prohibition, is not a request for something now.
_LASTING = re.compile(
    rf"(?<![^\W\d_])(?:{_ALWAYS}|{_TEMPORAL})(?![^\W\d_])|{_ALWAYS_EAST}|之前|전에"
)
_LASTING_RULE = re.compile(rf"(?<![^\W\d_])(?:{_ALWAYS})(?![^\W\d_])|{_ALWAYS_EAST}")
# Clauses of a request: "read CONTRIBUTING.md, I follow it to the letter" asks and says.
_SUBJECT = re.compile(
    r"\s*(?:[,;:\u3001\uff0c\uff1b\u060c]|\s[-\u2013\u2014]+\s)\s*(?=(?:i|i'm|i've|we|we're|my"
    r"|our|me|ich|wir|mein\w*|unser\w*|je|j'|nous|mon|ma|mes|notre|nos|yo|nosotros|mi|mis"
    r"|nuestr\w+|io|noi|mio|mia|miei|nostr\w+|eu|nós|meu|minha|nosso|nossa|ik|wij|we|mijn"
    r"|onze|ja|my|mój|moja|nasz\w*|я|мы|мой|моя|наш\w*|ben|biz|benim|bizim|انا|نحن|احنا"
    r"|मैं|हम|मेरा|मेरी|हमारा|main|hum|mera|meri|hamara|saya|aku|kami|kita|mình|tôi|em|anh"
    r"|chúng tôi|chúng mình|我|我们|我的)(?![^\W\d_])|我|私|僕|俺|나는|내가|우리|저는|제가)"
)


# "By the way": the speaker turns to something else, with or without a comma before it
# (Thai writes none: "…ให้หน่อย อ้อ ปีให้ใช้เป็น ค.ศ. นะ").
_ASIDE = re.compile(
    r"\s+(?=(?:btw|by the way|incidentally|übrigens|nebenbei|au fait|d'ailleurs|por cierto"
    r"|a propósito|aliás|tra l'altro|trouwens|overigens|förresten|przy okazji|swoją drogą"
    r"|кстати|между прочим|до речі|bu arada|παρεμπιπτόντως|بالمناسبة|דרך אגב|वैसे|omong-omong"
    r"|ngomong-ngomong|nhân tiện|참고로|อ้อ|อีกอย่าง|ว่าแต่)(?![^\W\d_]))"
    r"|(?=ちなみに|ところで|顺便|另外|对了)"
    # Thai ends a spoken sentence with a particle and a space, no full stop: "… ปี
    # 2560-2566 นะ ปีในไฟล์เป็น พ.ศ. … ช่วยอ่าน … ให้หน่อย" states, then asks.
    r"|(?:(?<=นะ)|(?<=ครับ)|(?<=ค่ะ)|(?<=คะ)|(?<=จ้ะ)|(?<=จ้า))\s+(?=[\u0e00-\u0e7f])"
)


def _request_clause(clause: str) -> bool:
    return bool(_REQUEST_OPENING.search(clause)) and not _LASTING.search(clause)


def _parts(text: str) -> list[str]:
    """The clauses of a folded text for :func:`is_request`: sentences cut where the
    speaker turns to themself ("…, I follow it to the letter")."""
    return [
        c
        for s in sentences(text)
        for part in _SUBJECT.split(s.text)
        for c in _ASIDE.split(part)
        if c.strip(" \t\"'.,;:!?()[]-*>")
    ]


def is_request(text: str) -> bool:
    """Whether the text is a request for something now rather than a lasting rule or a
    statement: every clause of it (cut where the speaker turns to themself) asks for
    something now."""
    parts = _parts(fold(text))
    return bool(parts) and all(_request_clause(p) for p in parts)


def has_request(text: str) -> bool:
    """Whether some clause of the text asks for something now."""
    return any(_request_clause(c) for c in _parts(fold(text)))
