"""What a memory asks beyond what the exact checks test (SPEC §14, issue 44).

An exact check may say an answer *follows* a memory (or leaves it *untouched*) only when
it tests everything the memory asks. "Amounts in euros": the currency check tests all of
it. "Amounts in € M with one decimal": it tests the currency, not the unit or the
precision, and "€388,910" would pass. Likewise "use polars" against "use polars lazy
frames" (the library, not its API), "answer in German" against "answer in German, per
Sie" (the language, not the register), "indent with spaces" against "indent with 4
spaces".

So every word of a clause that names what a check tests -- and of the clauses joined to
it in its sentence -- must be accounted for, or the memory is left to the side model:

* the thing tested itself (the mention, cut out by the caller) and the cues the rules
  read (``never``, ``use``, ``instead of``, ``antworte``; :mod:`.rules` passes them);
* function words of the languages memories are written in
  (:func:`ipymemory.screen.lexicon.all_function_words`) and the extractor's stock
  phrasing ("the user prefers", "always");
* the subject a check is about -- amounts and money for a currency, answers and replies
  for a language, code, data, charts, tests and queries for a library -- and the ways
  of saying the same ask ("short and direct", "plain pytest").

Two kinds of word are never accounted for, even where they are function words: numbers
("4 spaces", "two sentences", "zwei Nachkommastellen": a check tests no count) and
forms of address ("per Sie", "de usted", "vouvoyer", "敬語": a register).

A word outside these lists is taken for an ask the checks cannot see. That is the safe
side: the side model judges the memory, at the price of one more memory in its request.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import cache

from .._language import all_function_words  # the measured function words

__all__ = ["is_aside", "untested_word"]

# Words that ask nothing more than the checks test, in the languages memories are
# written in (lowercase, accents as written; compared with and without accents).
_ACCOUNTED = """
    user user's users nutzer nutzerin benutzer utilisateur utilisatrice usuario usuaria
    utente usuário prefers prefer preferred preference wants want would like likes
    wishes möchte mag will wünscht bevorzugt souhaite veut aimerait préfère quiere desea
    prefiere gustaría vuole preferisce quer prefere always every all any each whole
    everything everywhere immer jede jeder jedes alle allen alles stets toujours tous
    toutes tout chaque siempre todas todos cada sempre tutte tutti ogni todas todos
    please bitte merci por favor remember note must should make sure ensure keep stay
    stays remain remains be is are was am be been being gets get got give given
    write writes written writing show shows shown showing present presents display
    displays label labels labelled labeled put puts mark format formatted formats
    report reports express expressed state give gives list lists use used uses
    schreibe schreiben schreibt zeige zeigen zeigt angeben angegeben gib geben nennen
    darstellen darstellt halte halten bleiben bleibt sein sind ist werden wird
    écris écrire écrit écrivez affiche afficher affichez montre montrer donne donner
    donnés donnée données indique indiquer présente présenter exprime exprimer reste
    restent sont être soit
    escribe escribir escriba muestra mostrar muestre da dar indica indicar presenta
    presentar expresa expresar ser son está están sea estar
    answers answer answered responses response replies reply respond responds
    explanations explanation messages conversation chat text texts prose
    antworten antwort antworte antwortet erklärungen erklärung texte text
    réponses réponse réponds répondre répondez explications textes
    respuestas respuesta responde responder responda explicaciones textos
    risposte risposta rispondi respostas resposta responde responda
    even though if when asks ask asked writes wrote speaks talks question questions
    fragt frage fragen schreibt demande demandé pose écrit pregunta escribe
    amounts amount money monetary sums sum totals total figures figure numbers number
    values value prices price costs cost revenue revenues sales spend spending budget
    budgets invoices invoice financial finance currency currencies denominated
    beträge betrag geldbeträge summen summe zahlen werte preise preis kosten umsatz
    umsätze währung rechnungen montants montant sommes somme chiffres valeurs prix coûts
    coût chiffre affaires devise factures importes importe cantidades cantidad cifras
    valores precios costes costos ventas moneda facturas importi cifre prezzi valori
    data dataset datasets
    code codes coding snippets snippet scripts script notebook notebooks cells cell
    dataframe dataframes frame frames table tables tabular analysis analyses work
    wrangling processing manipulation transformations
    charts chart plots plot plotting figures graphs graph visualisations visualizations
    visualisation visualization dashboards dashboard diagrams diagram
    http calls call requests request web scraping parsing queries query sql database
    databases files file local parquet csv json excel spreadsheets
    tests test testing unit integration suites suite
    models model training deep learning neural networks network machine ml
    dependencies dependency packages package environments environment installs install
    installing installation
    datenrahmen daten tabellen analysen diagramme diagramm grafiken grafik abfragen
    abfrage dateien datei lokale lokalen lokal modelle modell netze neuronale
    abhängigkeiten pakete umgebung laufen läuft über machen mache erstellen erstelle
    données tableaux tableau analyses graphiques graphique requêtes requête fichiers
    fichier locaux réseaux réseau neurones modèles modèle dépendances paquets
    environnement fais faire crée créer
    datos tablas tabla análisis gráficos gráfico consultas consulta archivos archivo
    ficheros fichero redes red neuronales modelos modelo pruebas prueba dependencias
    paquetes entorno haz hacer crea crear
    syntax syntaxe sintaxis syntax style
    indent indents indented indentation indenting level levels line lines python
    einrücken einrückung rückt zeilen indentation indenter sangría sangrar líneas
    keywords keyword upper uppercase capitals capital letters case
    short shorter brief concise terse succinct direct point few sentences sentence
    kurz kürzer knapp bündig direkt wenige sätze court courte courtes courts concis
    concise concises direct directes phrases breve breves corto cortos corta cortas
    conciso concisa directo directa frases
    emojis emoji emoticons smileys
    preamble preambles introductions introduction recaps recap filler fluff
    intros intro summaries summary
    full fully type types typed hints hint annotations annotation parameters parameter
    arguments argument return returns value function functions method methods
    signatures signature
    way ways instead rather than over only nur seulement solo sólo just
    here project projects repo repository codebase team's team
    us carry carries carried has have having include includes included contain contains
    made built drawn done created produced go goes van va vont gehen geht
    instalar instala instale instalan instalado paquetes installiere installieren
    installe installer comments comment commit commits docstrings docstring
    r python sql them its you your yours load loads loading loaded laden lade charger
    charge cargar carga caricare carregar proyecto projekt projet progetto projeto
    repositorio dépôt repository
"""

# Subjects, articles and reasons that open a clause stating a fact or why ("the team
# shares them", "weil", "car"): such a clause asks nothing.
_ASIDE_TEXT = """
    the this that these those it its it's they their our we he she his her there
    because since as so which who der die das dieser diese es sie er wir unser unsere
    weil da denn deshalb le la les ce cette ces il elle ils elles nous notre car parce
    puisque el la los las este esta estos estas ello ellos nuestro nuestra porque ya
    il lo gli questo questa perché poiché o os as este esta eles nosso nossa porque
"""
_ASIDE_OPENERS = frozenset(_ASIDE_TEXT.split())

# Numbers a check never counts ("two sentences", "zwei Nachkommastellen"); "one"/"ein"
# are articles too, and what they count is itself unaccounted ("one decimal").
_NUMBER_TEXT = """
    two three four five six seven eight nine ten twelve twenty hundred thousand
    zwei drei vier fünf sechs sieben acht neun zehn zwölf zwanzig hundert tausend
    deux trois quatre cinq six sept huit neuf dix douze vingt cent mille
    dos tres cuatro cinco seis siete ocho nueve diez doce veinte cien mil
    due tre quattro cinque sei sette otto nove dieci dois três quatro
"""
_NUMBER_WORDS = frozenset(_NUMBER_TEXT.split())

# Forms of address: a register the language check does not test ("Sie" and "du",
# "vous" and "tu" are function words, so they are listed here by their uses).
_ADDRESS = re.compile(
    r"\b(?:per|mit|in der|in) (?:sie|du)\b|\b(?:sie|du)-form\b|\bsiez\w*|\bduz\w*|"
    r"\bvouvoi\w*|\bvouvoy\w*|\btutoi\w*|\btutoy\w*|\ben (?:vous|tu)\b|"
    r"\bde (?:usted|tú|vos)\b|\bustedes\b|\busted\b|\btute[aá]\w*|\bvosea\w*|"
    r"\bdare del (?:lei|tu)\b|\bdar(?:e)? del lei\b|\bformal\w*|\binformal\w*|"
    r"敬語|敬语|丁寧語|です[・/]?ます|だ[・/]?である"
)
_DIGITS = re.compile(r"\d")
# The user's own exception ("unless asked"): the checks leave a query that names the
# thing to the side model already.
_EXCEPTION = re.compile(
    r"\bunless (?:asked|requested|told|the user asks)\b|\bauf nachfrage\b|"
    r"\bwenn nicht (?:gefragt|verlangt)\b|\bsauf (?:si )?demand\w*|\bsalvo que se pida\b|"
    r"\bsi no se pide\b"
)
# What follows a reason word explains the ask; it asks nothing more.
_BECAUSE = re.compile(
    r"\b(?:because|weil|denn|car|parce que|puisque|porque|ya que|perché|poiché|omdat)\b|"
    r"因为|由于"
)
_WORD = re.compile(r"[^\W\d_]+")
_EAST = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u30a0-\u30ff\uac00-\ud7af]+")
_HIRAGANA = re.compile(r"[\u3040-\u309f]+")
# What an ask in Chinese or Japanese says around the thing tested ("所有回答都用…").
_EAST_ACCOUNTED = (
    "所有",
    "全部",
    "一律",
    "一定",
    "总是",
    "總是",
    "始终",
    "回答",
    "回复",
    "回覆",
    "答复",
    "答覆",
    "用户",
    "用戶",
    "使用",
    "采用",
    "请",
    "請",
    "用",
    "都",
    "要",
    "必须",
    "必須",
    "应该",
    "應該",
    "希望",
    "喜欢",
    "偏好",
    "代码",
    "代碼",
    "数据",
    "數據",
    "金额",
    "金額",
    "显示",
    "顯示",
    "回答",
    "答",
    "返答",
    "返事",
    "書",
    "常",
    "必",
    "全",
    "使",
    "不要",
    "不用",
    "别",
    "避免",
    "禁止",
    "而不是",
    "而非",
    "代替",
    "表情符号",
    "表情",
    "絵文字",
    "我",
    "你们",
    "他",
    "她",
    "時",
    "时",
    "时候",
    "即使",
    "也",
    "问",
    "問",
    "写",
    "寫",
    "说",
    "說",
)

_EAST_LONGEST_FIRST = sorted(set(_EAST_ACCOUNTED), key=len, reverse=True)


@cache
def _accounted() -> frozenset[str]:
    words = set(_ACCOUNTED.split()) | set(all_function_words())
    return frozenset(words | {_plain(w) for w in words})


def _plain(word: str) -> str:
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def untested_word(
    clause: str,
    spans: Sequence[tuple[int, int]] = (),
    cues: Iterable[re.Pattern[str]] = (),
    extra: Iterable[str] = (),
) -> str | None:
    """The first word of ``clause`` (lowercased text) that asks something no check
    tests, or None: ``spans`` are the mentions of what the checks test (cut out),
    ``cues`` the patterns of the rules' cue words, ``extra`` words the caller
    accounts for (a library's conventional alias)."""
    text = clause
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + " " + text[end:]
    text = _EXCEPTION.sub(" ", _BECAUSE.split(text, maxsplit=1)[0])
    if (found := _ADDRESS.search(text)) is not None:
        return found.group(0)
    if (found := _DIGITS.search(text)) is not None:
        return found.group(0)
    # Chinese and Japanese words first: a cue word cut out of "用户" would leave "户".
    text = _HIRAGANA.sub(" ", text)
    for known in _EAST_LONGEST_FIRST:
        text = text.replace(known, " ")
    for pattern in cues:
        text = pattern.sub(" ", text)
    accounted = _accounted() | frozenset(extra)
    words: list[str] = _WORD.findall(text)
    for word in words:
        east = _EAST.search(word) is not None
        if (
            east
            or word in _NUMBER_WORDS
            or (word not in accounted and _plain(word) not in accounted)
        ):
            return word
    return None


def is_aside(clause: str, opener: str) -> bool:
    """Whether a clause joined to an ask states a fact or a reason rather than asking
    more: it opens with a subject, an article or a reason word ("the team shares them",
    "weil …", "car …"), or -- after a colon -- explains without counting anything ("Kein
    sqlite3: zu langsam für unsere Dateien")."""
    words = _WORD.findall(clause)
    if words and words[0] in _ASIDE_OPENERS:
        return True
    if opener.strip() in (":", "\uff1a", "\u2014", "\u2013", "-"):
        numbered = _DIGITS.search(clause) or any(w in _NUMBER_WORDS for w in words)
        return not numbered and _ADDRESS.search(clause) is None
    return False
