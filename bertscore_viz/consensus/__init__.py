"""BERTScore consensus among many samples: N x N matrices, MBR selection, best-of-n, and support.

One embedding per distinct text and N^2 cheap matches on the device, instead of bert-score's two model passes per
pair::

    from bertscore_viz.consensus import consensus, pairwise

    m = pairwise(samples, layer=4)                 # m.f1[i, j]: sample i against sample j
    res = consensus([samples_1, samples_2], references=[ref_1, None], sentence_support=True)
    res[0].chosen, res[0].expected_utility, res[0].oracle, res[0].gap
    res[0].token_support[k].support                # per token of sample k: mean best cosine in the others
    res[0].sentence_support[k].inconsistency       # per sentence: SelfCheckGPT's BERTScore score

What is computed, exactly: docs/MBR.md and the modules' docstrings (:mod:`~bertscore_viz.consensus.pairwise`,
:mod:`~bertscore_viz.consensus.mbr`, :mod:`~bertscore_viz.consensus.support`,
:mod:`~bertscore_viz.consensus.sentences`).
"""

from bertscore_viz.consensus.mbr import ConsensusResult, GroupConsensus, expected_utility, select
from bertscore_viz.consensus.pairwise import UTILITIES, PairwiseResult
from bertscore_viz.consensus.run import consensus, pairwise
from bertscore_viz.consensus.sentences import Sentence, count_tokens, split_sentences
from bertscore_viz.consensus.support import SentenceSupport, TokenSupport

__all__ = [
    "pairwise", "consensus", "PairwiseResult", "GroupConsensus", "ConsensusResult", "TokenSupport",
    "SentenceSupport", "Sentence", "split_sentences", "count_tokens", "expected_utility", "select", "UTILITIES",
]
