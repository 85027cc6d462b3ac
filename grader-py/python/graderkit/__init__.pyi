"""graderkit: graders for RL rewards and agent evaluations, with a Rust core."""

import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple, TypeAlias

from graderkit import scorer as scorer

__version__: str

# Errors

class GraderError(Exception):
    """The base class of every error graderkit raises."""

class PanicError(GraderError):
    """A bug in graderkit's native code: it stopped where it should have answered."""

class LimitError(GraderError):
    """An input past one of the bounds that keep every call short, where the caller asked for
    an error rather than a score of 0."""

class CommandError(GraderError):
    """A command could not be run (a missing working directory, a sandbox that cannot be
    made): the grader failed, not the agent."""

# The reference's text helpers

def normalize(text: str) -> str:
    """Lowercased, punctuation and articles removed, whitespace collapsed."""

def exact_match(answer: str, expected: str, *, normalize_text: bool = True) -> float:
    """1.0 when the answer equals ``expected`` (normalized unless told otherwise)."""

def contains(answer: str, substring: str, *, case_sensitive: bool = False) -> float:
    """1.0 when ``substring`` is in the answer."""

def contains_any(answer: str, substrings: list[str], *, case_sensitive: bool = False) -> float:
    """1.0 when any of ``substrings`` is in the answer."""

def contains_all(answer: str, substrings: list[str], *, case_sensitive: bool = False) -> float:
    """1.0 when every one of ``substrings`` is in the answer."""

def numeric_match(answer: str, expected: float, *, tolerance: float = 0.0) -> float:
    """1.0 when a number in the answer is within ``tolerance`` of ``expected``."""

def f1_score(answer: str, reference: str) -> float:
    """Token-level F1 of the normalized texts."""

# Similarity

class Score(NamedTuple):
    """A ROUGE score, as rouge-score's ``Score``: precision, recall and their F-measure."""

    precision: float
    recall: float
    fmeasure: float

def levenshtein(a: str, b: str) -> int:
    """rapidfuzz's ``Levenshtein.distance(a, b)``."""

def levenshtein_similarity(a: str, b: str) -> float:
    """rapidfuzz's ``Levenshtein.normalized_similarity(a, b)``, from 0 to 1."""

def indel(a: str, b: str) -> int:
    """rapidfuzz's ``Indel.distance(a, b)``."""

def ratio(a: str, b: str) -> float:
    """rapidfuzz's ``fuzz.ratio(a, b)``, from 0 to 100."""

def rouge_n(target: str, prediction: str, n: int = 1) -> Score:
    """rouge-score's ROUGE-N of ``prediction`` against ``target``."""

def rouge_l(target: str, prediction: str) -> Score:
    """rouge-score's ROUGE-L of ``prediction`` against ``target``."""

def bleu(hypothesis: str, references: list[str]) -> float:
    """sacrebleu's ``sentence_bleu(hypothesis, references).score``, from 0 to 100."""

def chrf(hypothesis: str, references: list[str]) -> float:
    """sacrebleu's ``sentence_chrf(hypothesis, references).score``, from 0 to 100."""

# Combining

def subscore(
    name: str, value: float, weight: float = 1.0, info: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """One named check in the wire format."""

def combine(subscores: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``EvaluationResult`` of ``subscores``."""

def combine_any(
    weight: float, subscores: Iterable[Mapping[str, Any]], *, name: str = "any"
) -> dict[str, Any]:
    """A node worth the best of ``subscores``."""

def combine_all(
    weight: float, subscores: Iterable[Mapping[str, Any]], *, name: str = "all"
) -> dict[str, Any]:
    """A node worth the worst of ``subscores``."""

# Formats: verifiers 0.3.1's legacy parsers

class Parser:
    """verifiers' ``Parser``: ``parse`` returns ``extract_fn(text)``."""

    logger: logging.Logger
    extract_fn: Callable[[str], str]
    def __init__(self, extract_fn: Callable[[str], str] = ...) -> None: ...
    def parse(self, text: str) -> Any:
        """``extract_fn(text)``."""
    def get_assistant_messages(self, completion: Any) -> list[Any]:
        """The messages of ``completion`` whose role is ``assistant``."""
    def get_system_messages(self, completion: Any) -> list[Any]:
        """The messages of ``completion`` whose role is ``system``."""
    def get_user_messages(self, completion: Any) -> list[Any]:
        """The messages of ``completion`` whose role is ``user``."""
    def get_tool_messages(self, completion: Any) -> list[Any]:
        """The messages of ``completion`` whose role is ``tool``."""
    def parse_answer(self, completion: Any) -> str | None:
        """``parse`` of a string, or of the last assistant message's text."""
    def get_format_reward_func(self) -> Callable[..., float]:
        """A reward function that gives every completion 1.0."""

class XMLParser(Parser):
    """verifiers' ``XMLParser``: an answer made of tagged fields."""

    answer_field: str
    def __init__(
        self,
        fields: Sequence[str | tuple[str, ...]],
        answer_field: str = "answer",
        extract_fn: Callable[[str], str] = ...,
    ) -> None: ...
    def parse(self, text: str, strip: bool = True, last: bool = False) -> Any:
        """A namespace with one attribute per tag: its first (or last) section, or ``None``."""
    def parse_answer(self, completion: Any) -> str | None:
        """The answer of a string or of a conversation, or ``None``."""
    def get_format_reward_func(self) -> Callable[[Any], float]:
        """verifiers' format reward (a function that pickles)."""
    def get_fields(self) -> list[str]:
        """The fields' names, in order."""
    def format(self, **kwargs: Any) -> str:
        """The fields written as tags, in the parser's order."""
    def get_format_str(self) -> str:
        """A description of the format, for a prompt."""

class ThinkParser(Parser):
    """verifiers' ``ThinkParser``: the answer is what follows the last ``</think>``."""

    def parse(self, text: str) -> str:
        """``extract_fn`` of the text after the last ``</think>``, stripped; ``""`` without."""

class MaybeThinkParser(Parser):
    """verifiers' ``MaybeThinkParser``: the text after the last ``</think>``, or all of it."""

    def parse(self, text: str) -> str:
        """``extract_fn`` of the text after the last ``</think>`` (or the whole text)."""

def think_format_reward(messages: str | Iterable[Any]) -> float:
    """The share of the assistant messages that follow ``ThinkParser``'s format."""

# JSON

def is_json(answer: str) -> bool:
    """Whether the answer is JSON (``JSON.parse`` succeeds)."""

def contains_json(answer: str) -> bool:
    """Whether the answer holds a JSON object (promptfoo's ``extractJsonObjects``)."""

def json_equals(answer: str, expected: Any) -> bool:
    """Whether the answer is JSON equal to ``expected``, ignoring key order."""

class JsonSchema:
    """A JSON Schema, compiled once to check many answers."""

    def __init__(self, schema: Any, *, draft: str | None = None) -> None: ...
    @property
    def schema(self) -> Any:
        """The schema, as the Python value it was made from."""
    @property
    def draft(self) -> str | None:
        """The draft chosen, or ``None`` for the schema's own."""

class SchemaMismatch:
    """Why JSON does not match a schema."""

    keyword: str
    instance_path: str
    schema_path: str
    message: str
    def __init__(self, keyword: str, instance_path: str, schema_path: str, message: str) -> None: ...

class SchemaMatch:
    """The verdict of a schema check; true when the answer matched."""

    matched: bool
    json: bool
    span: tuple[int, int] | None
    mismatches: tuple[SchemaMismatch, ...]
    reason: str | None
    def __init__(
        self,
        matched: bool,
        json: bool,
        span: tuple[int, int] | None = None,
        mismatches: tuple[SchemaMismatch, ...] = (),
        reason: str | None = None,
    ) -> None: ...
    def __bool__(self) -> bool: ...

def matches_schema(answer: str, schema: JsonSchema | Any) -> SchemaMatch:
    """Whether the answer is JSON matching ``schema``."""

def contains_schema_match(answer: str, schema: JsonSchema | Any) -> SchemaMatch:
    """Whether the answer holds a JSON object matching ``schema``."""

# Commands

class Sandbox:
    """The bubblewrap sandbox a command runs in."""

    def __init__(
        self,
        *,
        network: bool = False,
        read_only: Sequence[str | os.PathLike[str]] = ...,
        writable: Sequence[str | os.PathLike[str]] = ...,
        or_unsandboxed: bool = False,
    ) -> None: ...
    @property
    def network(self) -> bool:
        """Whether the command shares the host's network."""
    @property
    def read_only(self) -> list[os.PathLike[str]]:
        """The host's paths bound read-only."""
    @property
    def writable(self) -> list[os.PathLike[str]]:
        """The host's paths bound read-write."""
    @property
    def or_unsandboxed(self) -> bool:
        """Whether the command runs unsandboxed where bwrap cannot sandbox."""

class BashGrader:
    """A shell command scored by its exit code, with limits and, on request, a sandbox."""

    def __init__(
        self,
        command: str,
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 600.0,
        output_limit: int = 4194304,
        kill_grace: float = 1.0,
        login_shell: bool = True,
        env_clear: bool = False,
        pass_env: Sequence[str] = ...,
        inherit_secrets: bool = False,
        memory: int | None = 4294967296,
        processes: int | None = 4096,
        cpu_time: float | None = None,
        file_size: int | None = 8589934592,
        open_files: int | None = 4096,
        sandbox: bool | Sandbox | None = None,
        launcher: Sequence[str] | None = None,
    ) -> None: ...
    @property
    def command(self) -> str:
        """The command."""
    def grade(self, weight: float = 1.0, *, name: str | None = None) -> dict[str, Any]:
        """Runs the command and returns its subscore, a dict in the wire format."""

__all__: list[str]

# Math answers (math-verify's names, keywords and defaults)

MATH_SEMANTICS: int
PRESETS: tuple[str, ...]

class NormalizationConfig:
    """latex2sympy2_extended 1.11.0's ``NormalizationConfig``."""

    basic_latex: bool
    units: bool
    malformed_operators: bool
    nits: bool
    boxed: str
    equations: bool
    def __init__(
        self,
        basic_latex: bool = True,
        units: bool = False,
        malformed_operators: bool = False,
        nits: bool = False,
        boxed: str = "all",
        equations: bool = False,
    ) -> None: ...

class LatexExtractionConfig:
    """math-verify 0.9.0's ``LatexExtractionConfig``."""

    try_extract_without_anchor: bool
    boxed_match_priority: int
    normalization_config: NormalizationConfig
    def __init__(
        self,
        try_extract_without_anchor: bool = True,
        boxed_match_priority: int = 50,
        normalization_config: NormalizationConfig = ...,
    ) -> None: ...

class ExprExtractionConfig:
    """math-verify 0.9.0's ``ExprExtractionConfig``."""

    try_extract_without_anchor: bool
    def __init__(self, try_extract_without_anchor: bool = True) -> None: ...

class StringExtractionConfig:
    """math-verify 0.9.0's ``StringExtractionConfig``."""

    strings: tuple[str, ...]
    try_extract_without_anchor: bool
    lowercase: bool
    def __init__(
        self,
        strings: tuple[str, ...] = ...,
        try_extract_without_anchor: bool = True,
        lowercase: bool = True,
    ) -> None: ...

ExtractionTarget: TypeAlias = LatexExtractionConfig | ExprExtractionConfig | StringExtractionConfig

class Parsed:
    """What ``parse`` returned: math-verify's list of the answer and the extracted text."""

    def __len__(self) -> int:
        """How many items: 0 when nothing was found."""
    def __bool__(self) -> bool: ...
    def __getitem__(self, key: int) -> str:
        """The item at ``key``: the answer's text, then the extracted text."""
    def __str__(self) -> str:
        """As math-verify's list prints."""
    @property
    def span(self) -> tuple[int, int] | None:
        """Where in the text the answer was found, in characters."""

class MathConfig:
    """How a math reward reads golds and answers and compares them."""

    preset: str
    gold_extraction_config: Sequence[ExtractionTarget] | None
    answer_extraction_config: Sequence[ExtractionTarget] | None
    gold_extraction_mode: str | None
    answer_extraction_mode: str | None
    float_rounding: int | None
    numeric_precision: int | None
    strict: bool | None
    allow_set_relation_comp: bool | None
    semantics: str
    def __init__(
        self,
        preset: str = "math_verify",
        gold_extraction_config: Sequence[ExtractionTarget] | None = None,
        answer_extraction_config: Sequence[ExtractionTarget] | None = None,
        gold_extraction_mode: str | None = None,
        answer_extraction_mode: str | None = None,
        float_rounding: int | None = None,
        numeric_precision: int | None = None,
        strict: bool | None = None,
        allow_set_relation_comp: bool | None = None,
        semantics: str = "exact",
    ) -> None: ...
    def to_json(self) -> str:
        """The configuration as the native module reads it."""

def parse(
    pred: str,
    extraction_config: Sequence[ExtractionTarget] = ...,
    fallback_mode: Literal["no_fallback", "first_match"] = "first_match",
    extraction_mode: Literal["first_match", "any_match"] = "any_match",
    parsing_timeout: int | None = 5,
    raise_on_error: bool = False,
    *,
    semantics: Literal["exact", "parity"] = "exact",
) -> Parsed:
    """math-verify's ``parse``: the final answer in ``pred``."""

def verify(
    gold: Parsed | str,
    target: Parsed | str,
    float_rounding: int = 6,
    numeric_precision: int = 15,
    strict: bool = True,
    allow_set_relation_comp: bool = False,
    timeout_seconds: int | None = 5,
    raise_on_error: bool = False,
    *,
    semantics: Literal["exact", "parity"] = "exact",
) -> bool:
    """math-verify's ``verify``: whether ``target``'s answer is ``gold``'s."""

def verify_many(
    golds: Sequence[str],
    answers: Sequence[str],
    *,
    config: MathConfig | None = None,
    threads: int | None = None,
    deadline: float | None = None,
) -> list[bool | None]:
    """Each answer against its gold, on native threads without the GIL; ``None`` where not
    computed."""
