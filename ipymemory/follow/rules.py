"""What a memory asks that a check can test exactly: libraries and the answer's language
(SPEC §14).

A memory's text (description, then body) is cut into sentences and clauses. In each
clause every mention of a library (:mod:`.libraries`, plus any library the answer uses)
and of a language (:data:`~.language.LANGUAGE_NAMES`) gets a polarity from the words
right around it, in the languages memories are written in:

* **ruled out** -- a negation attached to it ("not pandas", "never use pandas", "don't
  ever import pandas", "kein pandas", "pas de pandas", "不要用 pandas"), the far side of
  a comparison ("polars over pandas", "instead of pandas", "statt pandas", "而不是
  pandas"), a verdict after it ("pandas is banned", "pandasは使わない"), or a list
  joined to one ("never pandas or dask");
* **asked for** -- a use word before it ("use polars", "prefers polars", "mit polars"),
  the near side of a comparison ("polars instead of pandas"), "を使う" after it;
* **unclear** -- anything else: a mere mention ("the user finds pandas slow"), a
  negation of some other verb ("don't forget pandas' dtypes"), a rule with a condition
  ("never pandas for files over 1 GB", "use pandas only for Excel"), a part of it
  (``pandas.read_csv``).

A library counts as ruled out only when every mention of it is; one unclear mention
makes the whole library unclear. A library name that is also a common word
("requests", "black", "click") counts only beside a sign that it is a library: in
backticks, after ``import``, next to another library, or with "library"/"package" in
its sentence.

A language is asked for only by a clause about answering ("answer in German",
"Antworte auf Deutsch", "réponds en français", "用中文回答"), never by one about code
("labels in German", "comments in English"): that is a judgment for the side model.

``pure`` says the memory asks nothing else: no other clause holds a directive ("keep it
short", "always add type hints"). Only a pure memory can be found *followed* by these
checks; any memory can be found *contradicted* (one exact breach is enough).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache

from .answer import ALIASES
from .language import names_to_codes
from .libraries import LIBRARIES, surface_names
from .untested import is_aside, untested_word

__all__ = [
    "STYLES",
    "MemoryRules",
    "mentioned_languages",
    "mentioned_libraries",
    "mentioned_styles",
    "rules_of",
]


@dataclass(frozen=True)
class MemoryRules:
    """What one memory asks (see the module docstring): canonical library names and
    language codes."""

    banned: frozenset[str] = frozenset()
    preferred: frozenset[str] = frozenset()
    unclear: frozenset[str] = frozenset()
    languages: frozenset[str] = frozenset()
    not_languages: frozenset[str] = frozenset()
    unclear_languages: frozenset[str] = frozenset()
    #: Style asks the checks can see (:data:`STYLES`), key -> "banned" or "preferred".
    styles: Mapping[str, str] = field(default_factory=dict)
    pure: bool = False

    @property
    def libraries(self) -> frozenset[str]:
        return self.banned | self.preferred | self.unclear

    @property
    def about_language(self) -> bool:
        return bool(self.languages or self.not_languages)


# --- cues -------------------------------------------------------------------------------
# Each is a regular expression over lowercased text; `\b` does not bind CJK, so those
# cues are written without it.

_NEGATORS = (
    r"\bnot\b|\bnever\b|\bno\b|\bdon'?t\b|\bdo not\b|\bdoesn'?t\b|\bdoes not\b|\bnor\b|"
    r"\bno longer\b|\bnicht\b|\bnie\b|\bniemals\b|\bkein(?:e|en|em|er)?\b|\bnicht mehr\b|"
    r"\bne\b|\bn'|\bpas\b|\bjamais\b|\baucun(?:e)?\b|\bplus jamais\b|\bnunca\b|\bjamás\b|"
    r"\bni\b|\bnon\b|\bmai\b|\bnão\b|\bnao\b|\bniet\b|\bnooit\b|\bgeen\b|"
    r"不要|别|勿|不用|不使用|不准|不能用|不许"
)
_STRONG_BEFORE = (
    r"\bavoid(?:s|ing)?\b|\bwithout\b|\bskip(?:s|ping)?\b|\bomit\w*\b|\bleave out\b|"
    r"\bweglassen\b|\bspare\b|\binstead of\b|\brather than\b|\bstop using\b|"
    r"\bbanned?\b|\bforbid(?:den)?\b|\bditch(?:ed)?\b|\bdrop(?:ped)?\b|"
    r"\b(?:moved?|moving|switch(?:ed|ing)?|migrat(?:e|ed|ing)|away) from\b|\boff of\b|"
    r"\breplac(?:e|es|ed|ing)\b|\bohne\b|\bstatt\b|\banstatt\b|\banstelle von\b|"
    r"\bvermeide[nt]?\b|\bverzichte auf\b|\bweg von\b|\bsans\b|\bau lieu de\b|"
    r"\bplutôt que\b|\bévite[rz]?\b|\bsin\b|\ben lugar de\b|\ben vez de\b|\bevita[r]?\b|"
    r"\bsenza\b|\binvece di\b|\banziché\b|\bevitare\b|\bsem\b|\bem vez de\b|"
    r"\bao invés de\b|\bevite\b|\bzonder\b|\bin plaats van\b|\bvermijd\b|"
    r"而不是|而非|避免|禁止|代替掉|弃用"
)
# Right after a mention (its verdict) and the head of a comparison.
_NEG_AFTER = (
    r"^\W{0,3}(?:is|are) (?:not|never|no longer)\b|^\W{0,3}(?:is|are) (?:banned|forbidden|"
    r"deprecated|off-limits|prohibited|discouraged|out|a no-go)\b|"
    r"^\W{0,3}(?:ist|sind) (?:verboten|tabu|nicht erlaubt)|^\W{0,3}(?:est|sont) (?:interdit|"
    r"à éviter|exclu)|^\W{0,3}(?:está|están) (?:prohibid|vetad)|^\W{0,3}è vietat|"
    r"^\W{0,3}é proibid|^\W{0,3}is verboden|"
    r"^\s*(?:は|を)?(?:使わない|使用しない|禁止|避け|使わず|使うな)|^\s*(?:ではなく|じゃなく)|"
    r"^\s*(?:是)?(?:禁止|不要|不用|不允许|别用)"
)
_COMPARE_AFTER = (
    r"^\W{0,3}(?:over|instead of|rather than|statt|anstatt|au lieu de|plutôt que|"
    r"en lugar de|en vez de|invece di|anziché|em vez de|in plaats van)\b|^\s*(?:而不是|而非)"
)
_COMPARE_BEFORE = (
    r"\b(?:over|instead of|rather than|statt|anstatt|anstelle von|au lieu de|plutôt que|"
    r"en lugar de|en vez de|invece di|anziché|em vez de|in plaats van)\W*$|(?:而不是|而非)\W*$"
)
_POSITIVE_BEFORE = (
    r"\b(?:use|uses|using|used|import|prefer|prefers|preferred|always|stick (?:to|with)|go with|"
    r"with|favou?rs?|choose|chooses|pick|default to|switch(?:ed)? to|mov(?:e|ed) to|"
    r"migrat(?:e|ed) to|to|verwende|verwendet|benutze|benutzt|nutze|nutzt|nimm|immer|"
    r"bevorzugt|mit|auf|utilise|utiliser|utilisez|préfère|toujours|avec|usa|usar|utiliza|"
    r"prefiere|siempre|con|usare|preferisce|sempre|use|prefere|com|gebruik|altijd|met)\b|"
    r"用|使用|偏好|喜欢|总是|一律|采用"
)
_POSITIVE_AFTER = (
    r"^\W{0,3}(?:only|nur|seulement|uniquement|solo|sólo|somente|alleen)\b|"
    r"^\W{0,3}(?:is|are) (?:fine|ok|okay|allowed|acceptable|welcome)\b|"
    r"^\W{0,3}(?:ist|sind) (?:ok|okay|erlaubt|in ordnung)\b|^\W{0,3}est (?:bien|ok|permis)\b|"
    r"^\W{0,3}está bien\b|^\W{0,3}va bene\b|^\s*(?:也)?可以|"
    r"^\s*(?:verwenden|benutzen|nutzen|nehmen|einsetzen|gebruiken)\b|"
    r"^\s*(?:を|で)?(?:使う|使って|使用|書く|使います)"
)
# Words a negation may reach across to its library ("don't ever use pandas").
_FILLERS = frozenset(
    (
        "use",
        "using",
        "used",
        "import",
        "importing",
        "install",
        "installing",
        "add",
        "adding",
        "touch",
        "write",
        "writing",
        "code",
        "in",
        "with",
        "pull",
        "bring",
        "rely",
        "on",
        "depend",
        "want",
        "wants",
        "like",
        "likes",
        "need",
        "needs",
        "ever",
        "any",
        "again",
        "the",
        "a",
        "an",
        "library",
        "package",
        "module",
        "suggest",
        "suggesting",
        "recommend",
        "recommending",
        "reach",
        "put",
        "include",
        "show",
        "print",
        "say",
        "send",
        "leave",
        "present",
        "display",
        "them",
        "it",
        "as",
        "label",
        "or",
        "format",
        "mark",
        "for",
        "load",
        "loading",
        "of",
        "more",
        "verwende",
        "verwenden",
        "benutze",
        "benutzen",
        "nutze",
        "nutzen",
        "nimm",
        "nehmen",
        "importiere",
        "importieren",
        "installiere",
        "mehr",
        "das",
        "die",
        "den",
        "der",
        "mit",
        "utilise",
        "utiliser",
        "utilisez",
        "de",
        "d",
        "du",
        "le",
        "la",
        "les",
        "plus",
        "importe",
        "importer",
        "installe",
        "avec",
        "en",
        "uses",
        "usar",
        "utilices",
        "utilizar",
        "uso",
        "el",
        "los",
        "más",
        "importes",
        "instales",
        "con",
        "usare",
        "usa",
        "di",
        "il",
        "più",
        "importare",
        "use",
        "utilize",
        "utilizar",
        "o",
        "mais",
        "importe",
        "com",
        "em",
        "gebruik",
        "gebruiken",
        "het",
        "meer",
        "met",
        "用",
        "使用",
        "再",
        "采用",
        "导入",
        "安装",
        "写",
    )
)
# A rule with one of these after its library applies only sometimes.
_CONDITION = re.compile(
    r"\b(?:for|when|whenever|if|unless|except|on|inside|within|during|while|only|just|"
    r"wenn|falls|für|bei|außer|ausser|nur|quand|si|pour|sauf|lors|cuando|para|salvo|"
    r"excepto|solo|sólo|quando|se|per|tranne|als|voor|behalve|alleen)\b|时|的时候|如果|除非|"
    r"对于|只|場合|だけ"
)
# ... but not these scopes, which cover everything the memory is about.
_ANY_SCOPE = re.compile(
    r"\b(?:for|in|on|with|within|inside|für|in|bei|pour|dans|en|para|per|voor) "
    r"(?:any|all|this|our|the|these|every|dem|diesem|unserem|allen|ce|nos|este|nuestro|"
    r"questo|deze)?\s*(?:project|repo|repository|codebase|code|notebooks?|team|work|"
    r"analysis|anything|everything|dataframes?|data ?frames?|dataframe code|tabular data|"
    r"data(?: work| processing| analysis| wrangling)?|new code|projekt|code|notebook|"
    r"projet|proyecto|progetto|project|repositorio|dépôt|código|codice|codebase|here)\b"
)
# "No pandas in hot loops": for a library, "in" names where the rule holds. (For a
# style, "no emojis in answers or commits" names what it covers.)
_IN = re.compile(r"\b(?:in|im|dans|en|nel|nei|em|no)\b")
_CONCESSIVE = re.compile(
    r"\b(?:even if|even when|even though|although|though|auch wenn|selbst wenn|obwohl|"
    r"même si|bien que|aunque|incluso si|anche se|sebbene|mesmo que|embora|ook al|hoewel)\b|"
    r"即使|虽然|尽管|たとえ"
)
_REASON = re.compile(
    r"\b(?:because|since|as|weil|da|denn|car|parce que|porque|perché|omdat|so)\b|因为|由于|"
    r"ので|から"
)
_NO_NEGATION_OF_USE = re.compile(
    r"\b(?:forget|hesitate|worry|mind|fear|afraid|just|only|merely|always|hesitiere|"
    r"vergiss|oublie|olvides|dimenticare|esqueça)\b"
)
_JOIN = re.compile(r"^[\s,/&]*(?:(?:or|and|nor|oder|und|noch|ou|et|ni|o|y|e|ó|of|en|或|和|与|、)"
                   r"[\s,]*(?:(?:the|a|an|der|die|das|le|la|les|el|los|il|lo)\s+)?)?$")  # fmt: skip
_LIBRARY_WORD = re.compile(
    r"\b(?:librar(?:y|ies)|packages?|modules?|libs?|frameworks?|import|pip|bibliothek|paket|"
    r"bibliothèque|librairie|paquete|librería|biblioteca|pacchetto|libreria|pakket)\b|库|包|"
    r"ライブラリ"
)
_ANSWERING = re.compile(
    r"\b(?:answers?|answering|repl(?:y|ies|ying)|respond(?:s|ing)?|responses?|writes?|"
    r"writing|speak|speaks|talk|talks|communicat\w*|explain\w*|chat\w*|convers\w*|"
    r"language|antwort\w*|schreib\w*|sprich|sprechen|erklär\w*|kommunizier\w*|sprache|"
    r"répon\w*|écri\w*|parle\w*|expliqu\w*|langue|respon\w*|escrib\w*|habla\w*|explica\w*|"
    r"idioma|lengua|rispond\w*|rispost\w*|scriv\w*|parla\w*|spiega\w*|lingua|escrev\w*|"
    r"fal[ae]\w*|resposta\w*|idioma|antwoord\w*|schrijf\w*|praat|taal)\b|回答|回复|答复|"
    r"交流|说|写|答え|回答|返答|返事|話|書い|대답|답변"
)
_CODE_PART = re.compile(
    r"\b(?:labels?|labell?ing|comments?|variables?|identifiers?|names?|docstrings?|commits?|"
    r"columns?|axis|axes|titles?|legends?|charts?|plots?|figures?|ui|logs?|strings?|"
    r"messages?|tests?|functions?|code|beschriftung\w*|kommentar\w*|variablen?|achsen?|"
    r"spalten?|titel|étiquettes?|commentaires?|colonnes?|titres?|etiquetas?|comentarios?|"
    r"columnas?|títulos?|etichette|commenti|colonne|titoli|rótulos?|comentários?|colunas?|"
    r"labels|commentaar)\b|标签|注释|变量|列名|标题|图表|ラベル|コメント|変数|列名"
)
_DIRECTIVE = re.compile(
    r"\b(?:always|never|don'?t|do not|avoid|prefer\w*|use|keep|make|write|add|include|put|"
    r"must|should|please|remember|stick|ensure|limit|only|no|without|be|answer|reply|"
    r"respond|explain|give|ask|wants?|likes?|immer|nie|niemals|bitte|verwende|benutze|"
    r"schreib\w*|halte|keine?|achte|muss|soll|toujours|jamais|utilise|écri\w*|garde|évite|"
    r"doit|merci|siempre|nunca|usa|escribe|mantén|evita|debe|sempre|mai|scrivi|deve|"
    r"escreva|evite|altijd|nooit|gebruik|schrijf)\b|总是|不要|必须|请|应该|使用|避免|いつも|必ず|"
    r"ください|しない"
)

# Style asks the checks can see in an answer (:mod:`.style`): the words for each, and
# what a mention without a cue means ("every function gets type hints" asks for them;
# "the user finds emojis distracting" alone asks nothing).
STYLES: dict[str, tuple[str, str]] = {
    "emoji": (
        r"\bemojis?\b|\bemoticons?\b|\bsmileys?\b|表情符号|表情|絵文字|이모지",
        "mention",
    ),
    "type-hints": (
        r"\btype (?:hints?|annotations?)\b|\btyped\b|\btyp(?:-| )?(?:hinweise?|annotationen)\b|"
        r"\bannotations? de type\b|\bindications? de type\b|\banotaciones de tipo\b|"
        r"\bsugerencias de tipo\b|类型注解|类型提示|型ヒント|型注釈",
        "preferred",
    ),
    "tabs": (r"\btabs?\b|\btabulat\w*\b|\btabuladores?\b|制表符|タブ", "mention"),
    "spaces": (r"\bspaces\b|\bleerzeichen\b|\bespaces\b|\bespacios\b|空格|スペース", "mention"),
    "short": (
        r"\bshort\b|\bbrief\b|\bconcise\b|\bterse\b|\bsuccinct\b|\bkurz\w*\b|\bknapp\w*\b|"
        r"\bcourte?s?\b|\bconcis\w*\b|\bbreves?\b|\bcort[oa]s?\b|简短|简洁|短く|簡潔",
        "preferred",
    ),
    # What a short answer leaves out: ruling it out asks for short answers.
    "padding": (
        r"\bpreambles?\b|\bintroductions?\b|\brecaps?\b|\bfiller\b|\bfluff\b|\balternatives\b|"
        r"\beinleitung\w*\b|\bpréambule\b|\bintroducci\w*\b|开场白|前置き",
        "mention",
    ),
    "currency-usd": (
        r"\bdollars?\b|\busd\b|\bus-dollar\w*|\bdólares\b|\bdollari\b|美元|ドル",
        "preferred",
    ),
    "currency-eur": (r"\beuros?\b|\beur\b|€|欧元|ユーロ", "preferred"),
    "currency-gbp": (r"\bpounds? sterling\b|\bgbp\b|£|英镑", "preferred"),
    "sql-upper": (
        r"\bupper ?case\b|\bcapitals?\b|\bcapital letters\b|\bgroßbuchstaben\b|"
        r"\bgroßgeschrieben\b|\bmajuscules?\b|\bmayúsculas?\b|大写|大文字",
        "preferred",
    ),
}
_STYLE_PATTERNS = {key: re.compile(pattern) for key, (pattern, _) in STYLES.items()}
_SQL_KEYWORDS = re.compile(r"\bsql\b.*\b(?:keywords?|schlüsselwörter|mots-clés|palabras clave)\b|"
                           r"\b(?:keywords?|schlüsselwörter|mots-clés|palabras clave)\b.*\bsql\b|"
                           r"sql.*关键字|sql.*キーワード")  # fmt: skip
_INDENT = re.compile(r"\bindent\w*|\beinr(?:ü|ue)ck\w*|\bindentation|\bsangr\w*|缩进|インデント")

# First words of a clause that states rather than asks.
_NOT_A_VERB = frozenset(
    [
        "the",
        "a",
        "an",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "they",
        "he",
        "she",
        "we",
        "our",
        "their",
        "his",
        "her",
        "user",
        "users",
        "everyone",
        "for",
        "in",
        "on",
        "at",
        "with",
        "by",
        "from",
        "of",
        "to",
        "as",
        "because",
        "since",
        "so",
        "when",
        "if",
        "unless",
        "except",
        "eg",
        "ie",
        "der",
        "die",
        "das",
        "ein",
        "eine",
        "er",
        "sie",
        "es",
        "wir",
        "nutzer",
        "für",
        "mit",
        "bei",
        "weil",
        "da",
        "le",
        "la",
        "les",
        "un",
        "une",
        "il",
        "elle",
        "ils",
        "nous",
        "utilisateur",
        "pour",
        "avec",
        "dans",
        "car",
        "parce",
        "el",
        "los",
        "las",
        "usuario",
        "para",
        "con",
        "en",
        "porque",
        "lo",
        "gli",
        "utente",
        "per",
        "perché",
        "o",
        "os",
        "usuário",
        "also",
        "too",
    ]
)

_SENTENCE = re.compile(r"[.!?](?=\s|$)|[\n;\uff1b\u3002\uff01\uff1f]")
_CLAUSE = re.compile(
    r",|\uff0c|\u3001|\(|\)|\uff08|\uff09|\u2014|\u2013|\s-\s|:(?=\s)|\uff1a|\b(?:but|aber|sondern|mais|pero|sino|ma|mas|"
    r"maar|however|jedoch|cependant|then|dann|puis|luego)\b|(?<!-)\s(?:and|und|et|y|e)\s|但是|但|不过|并且|而且"
)


@dataclass(frozen=True)
class _Mention:
    key: str  # a canonical library name or a language code
    start: int
    end: int
    backticked: bool
    part: bool  # followed by ".attr": a part of the library, not all of it


def rules_of(
    text: str, libraries: Iterable[str] = (), *, code: frozenset[str] = frozenset()
) -> MemoryRules:
    """The rules of a memory's text (its description and body), knowing
    :data:`LIBRARIES` and ``libraries`` (canonical names, e.g. what an answer uses);
    ``code``: the identifiers of the answer's code (lowercased), which a memory may ask
    for by name ("an `AsyncClient`": tested when the code has it)."""
    names = _library_names(frozenset(libraries))
    polar: dict[str, set[str]] = {}
    lang_polar: dict[str, set[str]] = {}
    style_polar: dict[str, set[str]] = {}
    pure = True
    for sentence in _pieces(_SENTENCE, text.lower()):
        strong = bool(_LIBRARY_WORD.search(sentence))
        pieces = _clauses(sentence)
        clauses = [clause for clause, _ in pieces]
        openers = dict(enumerate(opener for _, opener in pieces))
        found = [_library_mentions(c, names) for c in clauses]
        others = sum(len(f) for f in found)
        answering = bool(_ANSWERING.search(sentence))
        previous = "unclear"
        sentence_polar: list[tuple[str, str, int]] = []
        banned_in: set[int] = set()  # the clauses of this sentence that rule one out
        spans: dict[int, list[_Mention]] = {}  # per clause, what the checks test in it
        asking: set[int] = set()  # the clauses whose mentions ask something
        for index, (clause, mentions) in enumerate(zip(clauses, found, strict=True)):
            spans[index] = [*mentions, *_language_mentions(clause)]
            mentions = [m for m in mentions if _counts(m, strong or others > 1)]
            langs = _language_mentions(clause)
            asked = _style_mentions(clause, sentence)
            spans[index] += asked
            for mention, polarity in _polarities(clause, asked, "unclear"):
                if polarity in ("mention", "bare"):
                    polarity = STYLES[mention.key][1]
                if polarity in _ASKS and _narrowed(clause[mention.end :]):
                    polarity = "unclear"  # "type hints for public functions": a judgment
                style_polar.setdefault(mention.key, set()).add(polarity)
                if polarity in _ASKS:
                    asking.add(index)
            if asked and not mentions and not langs:
                previous = "unclear"
                continue
            if not mentions and not langs:
                if _directive(clause, openers[index]):
                    pure = False
                previous = "unclear"
                continue
            for mention, polarity in _polarities(clause, mentions, previous, libraries=True):
                sentence_polar.append((mention.key, polarity, index))
                if polarity == "banned":
                    banned_in.add(index)
                previous = polarity
            about_code = bool(_CODE_PART.search(clause))
            for mention, polarity in _polarities(clause, langs, "unclear"):
                polarity = "unclear" if polarity in ("mention", "bare") else polarity
                if not answering or about_code:
                    polarity = "unclear"
                    pure = pure and not _directive(clause)
                elif _CONDITION.search(clause) or _CONCESSIVE.search(clause):
                    polarity = "unclear"  # "even if they ask in English": not the ask
                elif polarity != "banned":
                    polarity = "preferred"  # "answer in German": the clause's own ask
                lang_polar.setdefault(mention.key, set()).add(polarity)
                if polarity in _ASKS:
                    asking.add(index)
        # "Polars, not pandas", "tests are pytest functions, never unittest": a name
        # beside a ban, without a cue of its own, is what is asked for instead.
        for key, polarity, index in sentence_polar:
            if polarity in ("bare", "mention"):
                contrast = bool(banned_in) and index not in banned_in
                polarity = "preferred" if contrast else "mention"
            polar.setdefault(key, set()).add(polarity)
            if polarity in _ASKS:
                asking.add(index)
        if asking and pure:
            pure = _tested_whole(pieces, spans, asking, code)
    libs = {key: _one(p, lenient=True) for key, p in polar.items()}
    spoken = {key: _one(p) for key, p in lang_polar.items()}
    styles = {key: _one(p, lenient=True) for key, p in style_polar.items()}
    padding = styles.pop("padding", None)
    if padding == "banned" and styles.get("short", "preferred") == "preferred":
        styles["short"] = "preferred"  # "no preamble, no recap": short answers
    elif padding is not None:
        styles["short"] = "unclear"
    return MemoryRules(
        banned=frozenset(k for k, p in libs.items() if p == "banned"),
        preferred=frozenset(k for k, p in libs.items() if p == "preferred"),
        unclear=frozenset(k for k, p in libs.items() if p == "unclear"),
        languages=frozenset(k for k, p in spoken.items() if p == "preferred"),
        not_languages=frozenset(k for k, p in spoken.items() if p == "banned"),
        unclear_languages=frozenset(k for k, p in spoken.items() if p == "unclear"),
        styles={k: p for k, p in styles.items() if p in ("banned", "preferred")},
        pure=pure and all(p in ("banned", "preferred") for p in styles.values()),
    )


_ASKS = frozenset({"banned", "preferred"})
_PERMISSION = re.compile(
    r"\b(?:can|may|might|allowed|fine|ok|okay|dürfen|darf|können|kann|erlaubt|peuvent|peut|"
    r"permis|pueden|puede|permitido|possono|può|podem|pode)\b|可以|也行|でもよい|でもいい|"
    r"\bif (?:needed|necessary)\b|\bsi besoin\b|\bbei bedarf\b|\bsi hace falta\b"
)
# The cue words :func:`_polarities` and :func:`_directive` read: they ask nothing beyond
# the thing tested (unanchored, so they are found anywhere in a clause).
_CUES = tuple(
    re.compile(pattern.replace("^\\W{0,3}", "").replace("^\\s*", ""))
    for pattern in (
        _NEGATORS,
        _STRONG_BEFORE,
        _NEG_AFTER,
        _COMPARE_AFTER,
        _POSITIVE_BEFORE,
        _POSITIVE_AFTER,
        _ANSWERING.pattern,
        _DIRECTIVE.pattern,
        _LIBRARY_WORD.pattern,
        _ANY_SCOPE.pattern,
        _CONCESSIVE.pattern,
        _INDENT.pattern,
    )
)


def _tested_whole(
    pieces: list[tuple[str, str]],
    spans: Mapping[int, list[_Mention]],
    asking: set[int],
    code: frozenset[str],
) -> bool:
    """Whether the checks test everything a sentence asks (:mod:`.untested`): each
    clause that asks (``asking``), and each clause joined to it that neither asks on
    its own (a directive, already impure) nor states a fact or a reason. Code the
    clause names in backticks and the answer's code has is tested, unless the clause
    rules something out ("not `read_csv`" is not kept by using it)."""
    for index, (clause, opener) in enumerate(pieces):
        cut = [(m.start, m.end) for m in spans[index]]
        if index in asking:
            if opener.strip() and is_aside(clause, ""):
                continue  # ": the team's dashboards embed plotly figures" says why
            if _language_extras(clause, spans[index]):
                return False  # "简体中文": a variety of the language, not tested
        elif _language_mentions(clause) and _CODE_PART.search(clause):
            # "comments in English" asks a language of the code, which no check reads
            # ("代码注释可以用英文" only allows one).
            if not _PERMISSION.search(clause):
                return False
            continue
        elif is_aside(clause, opener):
            continue
        if untested_word(clause, cut, _CUES, {*ALIASES, *_asked_code(clause, code)}) is not None:
            return False
    return True


def _asked_code(clause: str, code: frozenset[str]) -> frozenset[str]:
    """The identifiers ``clause`` names in backticks that ``code`` has, when the clause
    asks for them (no negation or avoidance in it)."""
    if not code or re.search(_NEGATORS, clause) or re.search(_STRONG_BEFORE, clause):
        return frozenset()
    named = {w for span in _BACKTICKED.findall(clause) for w in _IDENTIFIER.findall(span)}
    return frozenset(named & code)


_BACKTICKED = re.compile(r"`([^`]+)`")
_IDENTIFIER = re.compile(r"[a-z_]\w*")


def _language_extras(clause: str, mentions: list[_Mention]) -> list[str]:
    """What a language's name in ``clause`` says beyond the language ("简体" of
    "简体中文"): the name less a shorter name of the same language inside it."""
    names = names_to_codes()
    out = []
    for mention in mentions:
        surface = clause[mention.start : mention.end]
        code = names.get(surface)
        for other, other_code in names.items():
            if code is not None and other_code == code and other != surface and other in surface:
                out.append(surface.replace(other, "").strip())
    return [rest for rest in out if rest]


def mentioned_libraries(text: str, libraries: Iterable[str]) -> frozenset[str]:
    """Which of ``libraries`` (canonical names) ``text`` names, as a whole word."""
    wanted = frozenset(libraries)
    lowered = text.lower()
    found = [m for m in _library_mentions(lowered, _library_names(wanted)) if m.key in wanted]
    # "retry failed requests" is about requests, not `requests`.
    context = bool(_LIBRARY_WORD.search(lowered)) or len({m.key for m in found}) > 1
    return frozenset(m.key for m in found if _counts(m, context))


def mentioned_styles(text: str) -> frozenset[str]:
    """The style keys (:data:`STYLES`) whose words ``text`` uses."""
    lowered = text.lower()
    return frozenset(key for key, pattern in _STYLE_PATTERNS.items() if pattern.search(lowered))


def mentioned_languages(text: str) -> frozenset[str]:
    """The codes of the languages ``text`` names."""
    return frozenset(m.key for m in _language_mentions(text.lower()))


# --- mentions ---------------------------------------------------------------------------


@cache
def _library_names(extra: frozenset[str]) -> tuple[tuple[str, str, re.Pattern[str]], ...]:
    """(surface, canonical, pattern) for every known name, longest first."""
    table = surface_names({*LIBRARIES, *extra})
    out = []
    for surface, key in sorted(table.items(), key=lambda item: -len(item[0])):
        if len(surface) < 2:
            continue
        # ASCII boundaries: a name sits right against CJK text ("pandasではなく").
        pattern = re.compile(rf"(?<![A-Za-z0-9_.\-/]){re.escape(surface)}(?![A-Za-z0-9_\-])")
        out.append((surface, key, pattern))
    return tuple(out)


def _library_mentions(
    text: str, names: tuple[tuple[str, str, re.Pattern[str]], ...]
) -> list[_Mention]:
    taken: list[tuple[int, int]] = []
    out: list[_Mention] = []
    for _, key, pattern in names:
        for m in pattern.finditer(text):
            start, end = m.span()
            if any(s < end and start < e for s, e in taken):
                continue
            taken.append((start, end))
            after = text[end : end + 2]
            part = len(after) == 2 and after[0] == "." and (after[1].isalnum() or after[1] == "_")
            # "pandas' apply", "matplotlib's state machine": a part of it, not all of it.
            part = part or re.match(r"['\u2019]s?\s+\w", text[end : end + 4]) is not None
            quoted = (start > 0 and text[start - 1] in "`'\"") or text[end : end + 1] in "`'\""
            out.append(_Mention(key, start, end, quoted, part))
    return sorted(out, key=lambda m: m.start)


def _language_mentions(text: str) -> list[_Mention]:
    out: list[_Mention] = []
    taken: list[tuple[int, int]] = []
    for name, code in sorted(names_to_codes().items(), key=lambda item: -len(item[0])):
        cjk = not name.isascii() and not any(c.isalpha() and c.isascii() for c in name)
        pattern = re.escape(name) if cjk else rf"(?<!\w){re.escape(name)}(?!\w)"
        for m in re.finditer(pattern, text):
            start, end = m.span()
            if any(s < end and start < e for s, e in taken):
                continue
            taken.append((start, end))
            out.append(_Mention(code, start, end, False, False))
    return sorted(out, key=lambda m: m.start)


@cache
def _common_words() -> frozenset[str]:
    """Library names that are also common English words (they need a library sign)."""
    import wordfreq  # loaded with the language lists (see .language)

    out = set()
    for surface, _, _ in _library_names(frozenset()):
        if wordfreq.zipf_frequency(surface, "en") >= 3.5:
            out.add(surface)
    return frozenset(out)


def _counts(mention: _Mention, context: bool) -> bool:
    surfaces = {s for s, key, _ in _library_names(frozenset()) if key == mention.key}
    common = surfaces and surfaces <= _common_words()
    return not common or mention.backticked or context


# --- polarity ---------------------------------------------------------------------------


def _polarities(
    clause: str, mentions: list[_Mention], previous: str, *, libraries: bool = False
) -> Iterable[tuple[_Mention, str]]:
    """Each mention of ``clause`` with its polarity (``banned``, ``preferred``,
    ``unclear``, ``mention``: no cue at all, or ``bare``: a clause that is only the
    name); ``previous`` is the
    polarity of the last mention before the clause (a list may run across clauses:
    "never pandas, dask or vaex")."""
    last_end = 0
    last = previous
    rest = clause
    for mention in reversed(mentions):
        rest = rest[: mention.start] + rest[mention.end :]
    if mentions and previous not in ("unclear", "bare", "mention") and _JOIN.match(rest):
        # Only names and "or"s: the rest of a list ("never pandas, dask or vaex").
        yield from ((mention, previous) for mention in mentions)
        return
    for i, mention in enumerate(mentions):
        before = clause[last_end : mention.start]
        following = mentions[i + 1].start if i + 1 < len(mentions) else len(clause)
        after = clause[mention.end : following]
        polarity = _polarity(before, after, last, first=i == 0)
        # "httpx instead of requests for HTTP calls": the comparison names its domain.
        compared = re.search(_COMPARE_BEFORE, before) is not None
        rest = clause[mention.end :]
        if polarity == "banned" and not compared and _conditional(rest, libraries=libraries):
            polarity = "unclear"
        if mention.part:
            polarity = "unclear"
        yield mention, polarity
        last, last_end = polarity, mention.end


def _polarity(before: str, after: str, last: str, *, first: bool) -> str:
    if re.search(_NEG_AFTER, after):
        return "banned"
    if re.search(_COMPARE_AFTER, after):
        return "preferred"
    if not first and re.search(_COMPARE_BEFORE, before):
        return "banned"  # the far side of "plotly over matplotlib"
    strong = list(re.finditer(_STRONG_BEFORE, before))
    if strong and _reaches(before[strong[-1].end() :]):
        return "banned"
    negations = list(re.finditer(_NEGATORS, before))
    if negations:
        gap = before[negations[-1].end() :]
        if _reaches(gap) and not _NO_NEGATION_OF_USE.search(gap):
            return "banned"
        return "unclear"
    if re.search(_POSITIVE_AFTER, after):
        return "preferred"
    bare = not before.strip() and not after.strip()
    joined = _JOIN.match(before) is not None and (not first or bool(before.strip()))
    if (joined or bare) and last not in ("unclear", "mention"):
        return last  # a list: "never pandas, dask or vaex"
    if re.search(_POSITIVE_BEFORE, before):
        return "preferred"
    return "bare" if bare else "mention"


def _reaches(gap: str) -> bool:
    """A negation reaches its library across at most six filler words ("never show or
    label them as euros")."""
    words = re.findall(r"[\w']+|[^\s\w]", gap)
    words = [w for w in words if w not in ("`", "'", '"', ":")]
    return len(words) <= 6 and all(w in _FILLERS for w in words)


def _conditional(rest: str, *, libraries: bool = False) -> bool:
    """A condition follows the rule ("never pandas for big files"), not a scope that
    covers everything ("in this project") or a reason ("because it is slow")."""
    text = _REASON.split(rest, maxsplit=1)[0]
    text = _ANY_SCOPE.sub(" ", text)
    return bool(_CONDITION.search(text)) or (libraries and _IN.search(text) is not None)


def _narrowed(rest: str) -> bool:
    """A style ask holds only somewhere: a condition ("for the German subsidiary",
    "when …") or a place that is not the whole answer ("in Makefiles", "in commit
    messages"; "in answers or comments" is everywhere the check looks)."""
    text = _REASON.split(rest, maxsplit=1)[0]
    if _PLACE.search(text) is not None:
        return True
    # "for indentation", "on its parameters and return value": the ask's own words,
    # not a condition.
    condition = _CONDITION.search(_ANY_SCOPE.sub(" ", text))
    return condition is not None and untested_word(text[condition.start() :], (), _CUES) is not None


_PLACE = re.compile(
    r"\b(?:in|im|dans|en|nel|nei|em|no) (?!(?:all |every |any |the |your |its |their |our )?"
    r"(?:answers?|replies|responses?|antworten|réponses|respuestas|risposte|respostas|code|"
    r"comments?|prose|chat|text|python|sql|scripts?|notebooks?|output|this project|"
    r"the project|this repo|the repo|the codebase|this codebase)\b)\w"
)


def _directive(clause: str, opener: str = "") -> bool:
    """Whether a clause asks something: a directive word among its first three ("keep it
    short", "the user wants ..."), or -- opening its sentence -- a first word that is not
    a subject, an article, a preposition or a reason ("cite your sources." asks; "the
    user lives in Berlin" does not). After a comma or "and", a clause without a
    directive word is taken for the rest of a list ("commit messages or comments",
    "parameters and return value")."""
    head = clause.strip()
    words = head.split()
    if _DIRECTIVE.search(" ".join(words[:3])) is not None:
        return True
    if not head.isascii():
        return _DIRECTIVE.search(clause) is not None
    if not opener.strip() and words:
        first = re.sub(r"\W", "", words[0])
        # "Knows SQL well", "works on the pipeline": a description without its subject.
        described = first.endswith("s") and len(first) > 3 and first.isascii()
        return first not in _NOT_A_VERB and not described
    return False


def _one(polarities: set[str], *, lenient: bool = False) -> str:
    """All mentions agree, or "unclear"; ``lenient``: a mere mention beside the ask
    ("the user finds emojis distracting: never put emojis ...") does not disagree."""
    if lenient and len(polarities) > 1:
        polarities = polarities - {"mention", "bare"}
    one = next(iter(polarities)) if len(polarities) == 1 else "unclear"
    return "unclear" if one in ("mention", "bare") else one


def _style_mentions(clause: str, sentence: str) -> list[_Mention]:
    out: list[_Mention] = []
    for key, pattern in _STYLE_PATTERNS.items():
        if key == "sql-upper" and not _SQL_KEYWORDS.search(sentence):
            continue
        if key in ("tabs", "spaces") and not _INDENT.search(sentence):
            continue
        # Short answers: a clause about answering, not about code ("short names").
        about = key == "padding" or _ANSWERING.search(sentence)  # a preamble is an answer's
        if key in ("short", "padding") and (not about or _CODE_PART.search(clause)):
            continue
        out.extend(
            _Mention(key, m.start(), m.end(), False, False) for m in pattern.finditer(clause)
        )
    return sorted(out, key=lambda m: m.start)


def _clauses(sentence: str) -> list[tuple[str, str]]:
    """The clauses of a sentence, each with the separator before it ("" for the first)."""
    out: list[tuple[str, str]] = []
    opener = ""
    start = 0
    for m in _CLAUSE.finditer(sentence):
        piece = sentence[start : m.start()]
        if piece.strip():
            out.append((piece, opener))
        opener, start = m.group(0), m.end()
    piece = sentence[start:]
    if piece.strip():
        out.append((piece, opener))
    return out


def _pieces(pattern: re.Pattern[str], text: str) -> list[str]:
    return [piece for piece in pattern.split(text) if piece and piece.strip()]
