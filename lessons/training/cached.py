"""What the Training page computes once per process and shares read-only with every session (ui.compute.memo):
the bundled documentation corpus and the bigram baselines, the data a run starts from (build_data, which reads
them), and the untrained model a press of Train would start from. Here and not in page.py: the page is a script
run again on every rerun, and a wrapper made there would be made anew each time (ui/compute/cached.py says more).
The user's own text is not shared: it is encoded once per text and context in its session (setup.TextMemo).
"""

from __future__ import annotations

from core import data as core_data
from core.data import CorpusUnavailable, TextCorpus
from core.model import ModelConfig
from core.tasks import SyntheticTask
from core.train import TrainConfig, Trainer
from lessons.training.run import Run
from lessons.training.setup import N_SYMBOLS, Settings, TextMemo, example_ids
from ui.compute.memo import shared


@shared(1)
def bundled_problem() -> str | None:
    """None when the shipped documentation corpus can be read, else the sentence saying why not."""
    try:
        core_data.pydoc_text()
    except CorpusUnavailable as err:
        return str(err)
    return None


@shared(1)
def bundled_length() -> int:
    """How many characters the documentation corpus holds (said beside its name; only asked when it exists)."""
    return len(core_data.pydoc_text())


@shared(8)
def bundled_corpus(context: int) -> TextCorpus:
    """The documentation corpus in windows of `context`; read-only, shared by every session."""
    corpus = core_data.pydoc_corpus(context)
    corpus.train_ids.setflags(write=False)
    corpus.val_ids.setflags(write=False)
    return corpus


@shared(64)
def baseline(corpus: str, size: int) -> float:
    """The bigram baseline of the bundled corpus (size = context) or of a task (size = its length L)."""
    data = bundled_corpus(size) if corpus == "pydoc" else SyntheticTask(corpus, size, N_SYMBOLS)
    return data.bigram_baseline()



def build_data(settings: Settings, memo: TextMemo, text: bytes | str | None = None,
               text_name: str = "") -> tuple[TextCorpus | SyntheticTask, float]:
    """(the data a run trains on, its bigram baseline's validation loss). ValueError / CorpusUnavailable
    with a sentence for the user when the data cannot be had."""
    if settings.synthetic:
        return (SyntheticTask(settings.corpus, settings.task_length, N_SYMBOLS),
                baseline(settings.corpus, settings.task_length))
    if settings.corpus == "pydoc":
        return bundled_corpus(settings.context), baseline("pydoc", settings.context)
    corpus = memo.corpus(text, settings.context, text_name)
    return corpus, corpus.bigram_baseline()


@shared(16)
def untrained(settings: Settings) -> Run | None:
    """The model a press of Train would start from (same data, same seed), before its first step: what
    the page shows before a run. None for the user's own text (there is no text yet) or data this server
    cannot offer. Shared by every session and only read."""
    if settings.corpus == "text":
        return None
    try:
        data, bigram = build_data(settings, TextMemo())
    except (ValueError, CorpusUnavailable):
        return None
    cfg = ModelConfig(vocab_size=data.vocab_size, d_model=settings.d_model, n_heads=settings.n_heads,
                      n_layers=settings.n_layers, max_len=data.seq_len, pos_encoding=settings.pos_encoding)
    trainer = Trainer(cfg, data, TrainConfig(lr=settings.lr, batch_size=settings.batch_size), seed=settings.seed)
    return Run("untrained", settings, data, trainer, bigram, example_ids(data), 0, 0, state="paused")

