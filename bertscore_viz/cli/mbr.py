"""``bertscore-viz mbr``: minimum-Bayes-risk selection among each input's samples with BERTScore.

    bertscore-viz mbr --samples samples.txt --group-size 16 [--refs refs.txt] [--json] [-o chosen.tsv]
    bertscore-viz mbr --samples samples.txt --groups ids.txt
    bertscore-viz mbr --samples samples.jsonl [--support --json]

Inputs:
- plain text, one sample per line: ``--group-size N`` takes N consecutive lines per input (the line count must be a
  multiple of N); ``--groups FILE`` gives each line's input id, one per line, aligned with the samples (the samples of
  an id form its group, in file order; groups come in the order their ids first appear). ``--refs FILE`` gives one
  reference per input (one line per group, in group order); several ``--refs`` files give several references.
- JSON Lines (``.jsonl``, ``.ndjson``, ``.json``, or any file whose first line is a JSON object with ``"samples"``):
  one object per input, ``{"id": ..., "samples": [...], "references": [...]}``; ``id`` and ``references`` (a string
  or a list) are optional. ``--refs`` files may add references to records without them.

Output (``-o FILE``, written atomically, else stdout): a TSV with a header, one row per input: its id, the number
of samples, the chosen sample's index (from 0) and expected utility, the ranking of all samples (indices, best
first), with references the chosen sample's score against them, the oracle's index and score, the gap and the
chosen sample's rank by reference score, and the chosen text (its tabs and line breaks as spaces). An id holding a
tab, a line break or a backslash is escaped (``\\t``, ``\\n``, ``\\r``, ``\\\\``; other line breaks ``\\xNN``) so
that every row stays one line of the same columns. ``--json``: one JSON object per input (JSON Lines)
with the same fields, every sample's expected utility, the signature and, with ``--support``, each sample's
per-sentence support (SelfCheckGPT's BERTScore variant). A summary goes to stderr. docs/MBR.md says what is computed.
"""

from __future__ import annotations

import sys
import warnings

from bertscore_viz.consensus import ConsensusResult, consensus
from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.scorer import BertScoreWarning
from bertscore_viz.errors import InputError
from bertscore_viz.files.fileio import atomic_write_text, check_writable, terminal_json, terminal_safe
from bertscore_viz.files.samples import format_jsonl, format_tsv, read_groups
from bertscore_viz.progress import progress_bar

__all__ = ["run"]


def _summary(result: ConsensusResult) -> str:
    s = result.summary()

    def num(x) -> str:
        return "n/a" if x is None else f"{x:.6f}"

    text = (f"{result.signature} utility {s['utility']}: {s['groups']} inputs, {s['samples']} samples; mean expected "
            f"utility of the chosen samples {num(s['mean_expected_utility'])}")
    if "groups_with_references" in s:
        text += (f"\nagainst the references ({s['groups_with_references']} inputs): chosen "
                 f"{num(s['mean_chosen_score'])}, oracle {num(s['mean_oracle_score'])}, mean gap {num(s['mean_gap'])}"
                 f"; the chosen sample scores as high as the oracle in {100 * s['oracle_reached']:.1f}% of inputs")
    return text


def run(args) -> int:
    """``bertscore-viz mbr``: read the inputs, choose, write; 0 on success (errors raise, the entry prints them)."""
    if args.support and not args.json:
        raise InputError("--support adds per-sentence support to the JSON output: add --json.")
    if args.output:
        check_writable(args.output, "the output")  # before the model loads
    ids, groups, refs = read_groups(args.samples, args.group_size, args.groups, args.refs)
    scorer = ScoringOptions.from_namespace(args).scorer()
    with warnings.catch_warnings(), progress_bar("embedding", "texts") as progress:
        warnings.simplefilter("ignore", BertScoreWarning)
        result = consensus(groups, references=refs if any(refs) else None, scorer=scorer, utility=args.utility,
                           ids=ids, token_support=False, sentence_support=args.support,
                           progress=progress if args.verbose else None)
    for w in result.warnings:
        print(f"Warning: {terminal_safe(w)}", file=sys.stderr)
    text = format_jsonl(result, args.support) if args.json else format_tsv(result)
    if args.output:
        atomic_write_text(args.output, text)
        print(f"wrote {terminal_safe(args.output)}", file=sys.stderr)
    else:
        # on the terminal, nothing it would act on: the JSON's characters as \uXXXX (the same value), the TSV's as
        # \xNN / \uNNNN, as tsv_field writes other line breaks (its ids stay exact: their backslashes are doubled)
        sys.stdout.write(terminal_json(text) if args.json else terminal_safe(text, keep="\t\n"))
    print(terminal_safe(_summary(result), keep="\n"), file=sys.stderr)
    return 0
