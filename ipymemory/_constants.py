"""Every default and limit of ipymemory, in one place.

Settings a user can change (``%config IPyMemory``, ``IPYMEMORY_*``) are resolved by
:mod:`ipymemory.config`, whose fallbacks are these ``DEFAULT_*`` values; the rest are
fixed bounds of the format (SPEC §1) or of the protocol with the model. Nothing here
reads the environment.
"""

from __future__ import annotations

from typing import Final, Literal

# --- Models -------------------------------------------------------------------------
DEFAULT_MODEL: Final = "claude-sonnet-5-5"  # the agent's main model
DEFAULT_SIDE_MODEL: Final = "claude-haiku-5-5"  # selector / extractor / consolidator
DEFAULT_MAX_TOKENS: Final = 4096  # per main model call
DEFAULT_TIMEOUT: Final = 120.0  # seconds per model request
DEFAULT_MAX_RETRIES: Final = 2  # SDK retries of a failed request

# max_tokens of each side-query: a few names; a batch of records; a whole new set.
SELECT_MAX_TOKENS: Final = 1024
EXTRACT_MAX_TOKENS: Final = 8192
CONSOLIDATE_MAX_TOKENS: Final = 16384
MAX_SUMMARY_TOKENS: Final = 4096  # a history summary, at most
FOLLOW_MAX_TOKENS: Final = 1024  # the follow-up checker's verdicts (a few short lines)
# Extractor items (SPEC §9): at most this many evidence excerpts, each at most this long.
MAX_EVIDENCE_ITEMS: Final = 3
# A reply may quote more (a capable model quotes generously): the first MAX_EVIDENCE_ITEMS
# are kept, and only a reply past this many is refused.
MAX_EVIDENCE_GIVEN: Final = 10
MAX_EVIDENCE_CHARS: Final = 300
# What the extractor sees of each tool call's input and output (the rest is replaced by
# "[… N characters omitted]"): the head in the new messages, a stub in the turn before.
EXTRACT_TOOL_OUTPUT_CHARS: Final = 2000
EXTRACT_CONTEXT_TOOL_OUTPUT_CHARS: Final = 200
# Issue 31: the extractor's append-only requests send the session's turns since an
# anchor; past this many estimated tokens of them the anchor moves up to the turn before
# the new messages. Its prompt is cached on its own (over 4,096 tokens), so a move costs
# only the rewrite of a short history, and reads of a long prefix cost more: 2,000 was
# the cheapest in benchmarks/turn_cost.py (12,000 / 4,000 / 2,000 / 1,000 measured).
EXTRACT_PREFIX_TOKENS: Final = 2_000
# The extractor's catalog and the consolidator's candidates are bounded (issue 40): a set
# whose catalog lines (candidates' records) fit this many estimated tokens is shown whole,
# exactly as before; a larger one as the records most related to what is read (the keyword
# ranking over the new messages, or over the turn's items), then the newest, that fit.
# 2,000 tokens are ~100 catalog lines; 12,000 are a dozen records of the 4 KiB bound or
# ~60 of a typical size (benchmarks/README.md "No wait", turn_cost.py --records N).
EXTRACT_CATALOG_TOKENS: Final = 2_000
CONSOLIDATE_CANDIDATE_TOKENS: Final = 12_000

# --- The format (SPEC §1) -----------------------------------------------------------
MAX_RECORD_LINES: Final = 200  # a whole record file, frontmatter included
MAX_RECORD_BYTES: Final = 4096
# MEMORY.md's bounds: what it lists (the newest records that fit, then a note of how many
# more the manifest holds); never a reason to refuse a commit (issue 31). They are the
# reference agent's own bounds, so `check` warns when a set is beyond them.
DEFAULT_MAX_INDEX_LINES: Final = 200
DEFAULT_MAX_INDEX_BYTES: Final = 4096
# The manifest's own bound: far above any real set, a guard against a runaway writer.
MAX_SET_RECORDS: Final = 10_000

# --- The lock (SPEC §4) -------------------------------------------------------------
LOCK_STALE_SECONDS: Final = 30.0  # an unrefreshed lock is stale after this long
LOCK_REFRESH_SECONDS: Final = 10.0  # the holder's heartbeat
# Longer than the stale window, so a waiter outlives a SIGKILLed holder's lock.
DEFAULT_LOCK_TIMEOUT: Final = 45.0
LOCK_WAIT_REPORT_SECONDS: Final = 1.0  # a wait for the lock is reported after this, as often

# --- History and pending batches (SPEC §6) ------------------------------------------
DEFAULT_HISTORY_RETENTION_DAYS: Final = 30  # gc prunes history/files/ older than this
DEFAULT_HISTORY_RETENTION_BYTES: Final = 5 * 1024 * 1024  # ... or beyond this total
HISTORY_KEEP_ENTRIES: Final = 50  # files the newest entries reference are never pruned
# Provenance of one commit (review/provenance.py): the query and the files read are cut to
# these, then halved until all the added names' provenance fits the byte budget (the
# store refuses a journal line's actor/provenance over half of its 1 MiB).
PROVENANCE_QUERY_CHARS: Final = 2_000
PROVENANCE_FILES: Final = 50
PROVENANCE_PATH_CHARS: Final = 300
PROVENANCE_BUDGET_BYTES: Final = 128 * 1024
PROVENANCE_MEMORY_NAMES: Final = 40  # names per list of a turn's memory trace in the journal
# SPEC §11: a file the agent read is hashed whole for staleness up to this size (a
# bigger one is recorded without a hash: checked on every `check`, it would cost too much).
SOURCE_HASH_LIMIT: Final = 64 * 1024 * 1024
HISTORY_WIDGET_LIMIT: Final = 50  # entries %memory history shows unless --limit says
DEFAULT_PENDING_EXPIRY_DAYS: Final = 7  # an undecided batch in pending/ expires
# gc leaves unreferenced files younger than this: they may be a commit in progress.
GC_MIN_AGE_SECONDS: Final = 30.0

# --- Scopes (SPEC §11) ---------------------------------------------------------------
# The user's own memory, in <user_dir>/.memory/, shared by every project of that user.
DEFAULT_USER_DIR: Final = "~/.ipymemory"
USER_DIR_OFF: Final = "off"  # the value of user_dir that turns the user scope off
# A turn waits this long for the user scope (a network home may hang), then goes on
# with the project's set alone and says so.
USER_SCOPE_READ_TIMEOUT: Final = 5.0

# --- The turn (SPEC §2, §8) ---------------------------------------------------------
CommitMode = Literal["review", "auto", "off"]
COMMIT_MODES: Final[tuple[str, ...]] = ("review", "auto", "off")
DEFAULT_COMMIT_MODE: Final = "review"
DEFAULT_CONSOLIDATE_THRESHOLD: Final = 10  # consolidate when current + extracted >= this
DEFAULT_CONSOLIDATE_EVERY: Final = 3  # ... and this many were added since the last one
DEFAULT_MAX_SELECTED: Final = 5  # memories injected per turn when they must be chosen
# Issue 31 (SPEC §12): a set whose injected block fits this many estimated tokens is
# injected whole, with no selection (20 records of ~400 characters are ~2,100 tokens).
DEFAULT_MEMORY_BUDGET: Final = 3000
# Who chooses beyond the budget (SPEC §13: nothing waits before the first request): the
# keyword ranking at once ("keyword": its best max_selected, then the next best while the
# block fits the budget), and with "model" the side model too, beside the main call:
# what it picks that the first request lacked joins the next request of the tool loop,
# or the next turn (issue 40; the measured trade in benchmarks/README.md "No wait").
SELECTORS: Final[tuple[str, ...]] = ("keyword", "model")
DEFAULT_SELECTOR: Final = "keyword"
# The model selector sees the catalog lines of at most this many records (the newest
# past it, in set order): its input is bounded, and the same from call to call, so the
# prompt cache keeps it while the set does not change.
DEFAULT_SELECT_CANDIDATES: Final = 500
# Issue 40: the memory blocks a conversation's requests carry (each where it was first
# given, for the prompt cache) start again from the turn's own block when they would
# pass this many times memory_budget estimated tokens.
CARRIED_BUDGET_FACTOR: Final = 2
TRACES_KEPT: Final = 50  # turns whose memory trace a session keeps (%memory session)
# Escaped record texts remembered per process (a record's description and body, each
# rendered into every block that carries it): two texts per record of the largest set
# (issue 40: at 10,000 records a turn otherwise scans its block's records again).
ESCAPED_TEXT_CACHE: Final = 2 * 10_000
DEFAULT_MAX_TOOL_STEPS: Final = 20  # model/tool round trips per turn
DEFAULT_HISTORY_TOKEN_BUDGET: Final = 60_000  # request history before older turns are summarised

# --- The notebook display (issue 13) -------------------------------------------------
# %%agent's memory work on a worker of the kernel, after the cell ends (SPEC §12): None =
# on in a Jupyter kernel (ipykernel), off elsewhere (a terminal IPython, a script).
DEFAULT_BACKGROUND_MEMORY: Final = None
TEACHING_CELL_TIMEOUT: Final = 300  # seconds per cell of the headless teaching run
PROGRESS_TICK_SECONDS: Final = 0.5  # the progress line's clock redraws this often
# A streaming answer's Markdown is re-rendered at most this often (the last piece at once).
ANSWER_RENDER_SECONDS: Final = 0.1

# --- The agent's tools ---------------------------------------------------------------
DEFAULT_FILE_READ_LIMIT: Final = 100_000  # characters read_file returns
DEFAULT_LIST_FILES_LIMIT: Final = 200  # entries list_files returns
DEFAULT_PYTHON_OUTPUT_LIMIT: Final = 20_000  # characters of run_python output
DEFAULT_PYTHON_TIMEOUT: Final = 60.0  # seconds a run_python call may take
DEFAULT_ALLOW_HIDDEN: Final = False  # may the file tools see .env, .git, .memory, ...?

# --- Screening (SPEC §7) ---------------------------------------------------------------
# Origin (ipymemory/screen/origin.py): a source supports an item when it holds this share
# of the item's weighted terms; supports within the margin are a tie (to the less trusted,
# unless the user stated every name and number of the item);
# an item whose terms only tool output holds, at this share, is tool.
ORIGIN_SUPPORT_THRESHOLD: Final = 0.5
ORIGIN_TIE_MARGIN: Final = 0.15
ORIGIN_TOOL_ONLY_SHARE: Final = 0.25
# An item nothing supports at the threshold is the user's, not a file's, when the user's
# statements hold this share of it and the (same-script) tool output none of it.
ORIGIN_STATED_SHARE: Final = 0.25
# Words judged in any language (screen/lexicon.py, wordfreq's small lists): languages told
# apart by their function words, how many of a language's most frequent words are function
# words, and the Zipf frequency from which a word is ordinary (a capitalised ordinary word
# is not a name; 3.0 -- once in a million words -- is what the small lists hold).
# (issue 39: + Vietnamese, Indonesian, Arabic, Hindi -- a user's words in these are told
# apart from an item's, so a translation is seen as one.)
LEXICON_LANGUAGES: Final = (
    *("en", "de", "fr", "es", "it", "pt", "nl", "sv", "pl", "tr", "ru"),
    *("vi", "id", "ar", "hi"),
)
LEXICON_FUNCTION_WORDS_TOP: Final = 60
# The one language detector (ipymemory/_language.py) chooses among these Latin-script
# languages by their words: more than the screen reads (screen/agent.py), so a text in a
# language it does not read is told as such rather than taken for a near neighbour (the
# follow-up check's 14 and Indonesian, Vietnamese and Romanian; not Malay: its lists
# barely differ from Indonesian's; not Swahili: wordfreq has no list for it). A text in a
# language not listed is read by none of them: the agent screen finds its words unknown
# (screen/agent.py).
LANGUAGE_LATIN: Final = (
    "en", "de", "fr", "es", "it", "pt", "nl", "sv", "da", "nb", "fi", "pl", "cs", "tr", "id",
    "vi", "ro",
)  # fmt: skip
LEXICON_ORDINARY_ZIPF: Final = 3.0
# A memory depends on a file whose words it carries (the user did not write them) when
# they weigh at least this (screen/dependence.py: one name, number or long term, or two).
SOURCE_CARRIED_WEIGHT: Final = 2
# An auto-mode consolidation replacing more than half the set, or more than this many
# records, waits for review.
CONSOLIDATION_REVIEW_MAX_REPLACED: Final = 5

# --- Other agents' proposals (SPEC §10, issue 28) ----------------------------------------
# One proposal (memory_propose, a memory tool's batch) holds at most this many items and
# this many bytes of record text: a batch that large could never be read back from
# pending/ (its 4 MiB read bound) or committed into one set (max_index_lines).
MAX_PROPOSAL_ITEMS: Final = 200
# One file of pending/ is read (and written) up to this size: items + plan of a 200-record
# set fit many times over; a sync's pull larger than this is kept in several batches.
MAX_PENDING_FILE_BYTES: Final = 4 * 1024 * 1024
MAX_PROPOSAL_BYTES: Final = 1024 * 1024
# What a screening finding shows of its evidence, at most (issue 39: review, the journal).
FINDING_EVIDENCE_CHARS: Final = 160
# ... and how many findings of one item the journal keeps.
PROVENANCE_FINDINGS: Final = 12
# The auto-mode update guard counts what the same route (MCP, the memory tool, a sync)
# replaced through auto commits in this window, so one record per call is held as soon
# as all the calls together pass the CONSOLIDATION_REVIEW_MAX_REPLACED / half-the-set
# line; and how far back in the journal that is looked for.
AGENT_UPDATE_WINDOW_SECONDS: Final = 24 * 3600.0
AGENT_JOURNAL_LOOKBACK: Final = 200
# The memory tool finds a person's decisions on its batch in this many newest entries.
MEMORY_TOOL_JOURNAL_LOOKBACK: Final = 50

# --- Followed memories (SPEC §14) ------------------------------------------------------
# What the follow-up check says of an injected feedback/user memory after an answer, and
# which check decided it (the exact ones first, the side model for the rest).
FollowVerdict = Literal["follows", "contradicts", "untouched"]
FOLLOW_VERDICTS: Final[tuple[str, ...]] = ("follows", "contradicts", "untouched")
FOLLOW_DECIDERS: Final[tuple[str, ...]] = ("code", "language", "style", "model")
DEFAULT_FOLLOW_CHECK: Final = True  # check each answer against its injected memories
DEFAULT_MARK_MISSED: Final = True  # the next turn's block marks a memory not followed
# The memory tools on Jupyter's built-in MCP server (jupyter-server-mcp), for jupyter-ai's
# chats: registered, each call checked for the server's key (agents/jupyter_access.py).
DEFAULT_JUPYTER_MCP_TOOLS: Final = True
# The translation check (issue 39): its answers are a few numbers per held item; each
# of the user's words it is shown is cut to this many characters (a sentence or two).
SCREENER_MAX_TOKENS: Final = 512
SCREENER_WORDS_CHARS: Final = 1_000
FOLLOW_REASON_CHARS: Final = 200  # a verdict's reason, at most (the checker's and ours)
# What the checker sees of the answer and the query: a longer one keeps head and tail.
FOLLOW_ANSWER_CHARS: Final = 24_000
FOLLOW_QUERY_CHARS: Final = 2_000
# The answer's prose is judged for its language from this many words (Latin script) or
# characters (CJK) on; a language wins when its words' mean Zipf frequency is at least
# the minimum and leads the next language's by the margin (benchmarks/followed.py).
FOLLOW_LANGUAGE_MIN_WORDS: Final = 8
FOLLOW_LANGUAGE_MIN_CJK: Final = 12
FOLLOW_LANGUAGE_MIN_ZIPF: Final = 3.5
FOLLOW_LANGUAGE_MARGIN: Final = 1.0
# The follow log (history/followed.jsonl) is read from its end, at most this much.
FOLLOW_LOG_READ_BYTES: Final = 4 * 1024 * 1024

# --- The notebook's context in a prompt (%%agent {name}, {In[n]}, {Out[n]}, {Err}) -----
PROMPT_VALUE_LIMIT: Final = 8_000  # characters of one interpolated value
PANEL_PENDING_LIMIT: Final = 50  # pending batches the Memory panel lists (newest first)
# The server endpoint's disk reads: how long one request may take, and how many run at
# once (in the endpoint's own threads, so a stuck read never starves the server's).
SERVER_READ_TIMEOUT: Final = 15.0
SERVER_READ_THREADS: Final = 4

# --- Sync with an Anthropic memory store (SPEC §14) --------------------------------------
# Where a scope's records live in the store when no prefix is given: the project's under
# /ipymemory/<project directory name>/, the user scope's apart from every project.
SYNC_PREFIX_ROOT: Final = "/ipymemory/"
SYNC_USER_PREFIX: Final = "/ipymemory-user/"
# The memory store's own limits (the SDK's types): a path has 1-20 segments and at most
# 1,024 UTF-8 bytes; a memory holds at most 100 kB.
MEMORY_PATH_MAX_BYTES: Final = 1024
MEMORY_PATH_MAX_SEGMENTS: Final = 20
MEMORY_MAX_BYTES: Final = 102_400
SYNC_LIST_PAGE: Final = 100  # memories / versions per list page (the API's maximum)
# A push saves the sync state after this many writes (and at its end): a killed push
# redoes at most these, and finds them done (same content on both sides).
SYNC_SAVE_EVERY: Final = 50
# An idle pull asks only for the versions written since the newest one it saw; at most
# this many pages of them, and never when the last full listing is older than this.
SYNC_FEED_MAX_PAGES: Final = 3
SYNC_FULL_LIST_SECONDS: Final = 86_400.0
