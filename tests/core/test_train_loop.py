"""AdamW, clipping, the learning-rate schedule, the Trainer (chunks, divergence); tools/: checkpoints, the CLI."""

from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pytest

from core import train as tr
from core.data import pydoc_record, pydoc_text, text_corpus, text_digest
from core.model import ModelConfig
from core.model_file import flatten, load
from core.tasks import SyntheticTask
from tools import corpus as corpus_cli
from tools import train as cli
from tools.checkpoint import load_checkpoint, save_checkpoint


def tiny_text():
    return text_corpus("the cat sat on the mat. " * 200, context=16)


def tiny_cfg(data, **kw) -> ModelConfig:
    return ModelConfig(vocab_size=data.vocab_size, d_model=16, n_heads=2, n_layers=1, max_len=data.seq_len, **kw)


def test_adamw_matches_the_textbook_update():
    tc = tr.TrainConfig(lr=0.1, weight_decay=0.5, beta1=0.8, beta2=0.9, eps=1e-8)
    rng = np.random.default_rng(0)
    params = {"w_fc": rng.standard_normal((3, 2)), "b_fc": rng.standard_normal(2)}
    ref = {k: v.copy() for k, v in params.items()}
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    opt = tr.AdamW(params, tc)
    for t in range(1, 4):
        grads = {k: rng.standard_normal(p.shape) for k, p in params.items()}
        opt.update(params, grads, lr=0.1)
        for k in ref:
            m[k] = 0.8 * m[k] + 0.2 * grads[k]
            v[k] = 0.9 * v[k] + 0.1 * grads[k] ** 2
            m_hat, v_hat = m[k] / (1 - 0.8**t), v[k] / (1 - 0.9**t)
            decay = 0.1 * 0.5 * ref[k] if k == "w_fc" else 0.0  # no decay on biases
            ref[k] = ref[k] - decay - 0.1 * m_hat / (np.sqrt(v_hat) + 1e-8)
        for k in ref:
            np.testing.assert_allclose(params[k], ref[k], rtol=1e-10, atol=1e-12)


def test_clip_grad_norm_rescales_all_tensors_together():
    grads = {"a": np.array([3.0, 0.0]), "b": np.array([[4.0]])}
    assert tr.clip_grad_norm(grads, 1.0) == pytest.approx(5.0)
    np.testing.assert_allclose(grads["a"], [0.6, 0.0])
    np.testing.assert_allclose(grads["b"], [[0.8]])
    assert tr.clip_grad_norm(grads, 10.0) == pytest.approx(1.0)  # below the limit: unchanged
    np.testing.assert_allclose(grads["a"], [0.6, 0.0])


def test_learning_rate_schedule():
    tc = tr.TrainConfig(lr=1.0, warmup_steps=10, decay_steps=110, min_lr_ratio=0.1)
    assert tc.lr_at(0) == pytest.approx(0.1)
    assert tc.lr_at(9) == pytest.approx(1.0)
    assert tc.lr_at(60) == pytest.approx(0.55)  # half way down the cosine
    assert tc.lr_at(110) == pytest.approx(0.1) == tc.lr_at(500)
    assert tr.TrainConfig(lr=1.0, warmup_steps=0).lr_at(1000) == 1.0


@pytest.mark.parametrize(("options", "match"), [
    ({"lr": 0}, "learning rate"), ({"lr": float("nan")}, "learning rate"),
    ({"batch_size": 0}, "batch size"), ({"beta2": 1.0}, "betas"), ({"grad_clip": -1}, ">= 0"),
])
def test_train_config_rejects_bad_values(options, match):
    with pytest.raises(ValueError, match=match):
        tr.TrainConfig(**options)


def test_trainer_learns_in_chunks_and_evaluates():
    data = tiny_text()
    trainer = tr.Trainer(tiny_cfg(data), data, tr.TrainConfig(lr=3e-2, batch_size=16, warmup_steps=5), seed=0)
    first = trainer.evaluate()
    losses = trainer.step(80) + trainer.step(80)  # a plateau at the letter frequencies, then the drop
    assert len(losses) == 160 == trainer.steps == len(trainer.history)
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:5])
    assert trainer.evaluate() < 0.5 * first
    assert [s for s, _ in trainer.val_history] == [0, 160]
    assert all(a.dtype == np.float32 for a in flatten(trainer.params).values())
    assert trainer.status == "training"


def test_trainer_rejects_mismatched_data():
    data = tiny_text()
    with pytest.raises(ValueError, match="vocabulary"):
        tr.Trainer(ModelConfig(vocab_size=99, d_model=8, n_heads=1, n_layers=1, max_len=16), data)
    with pytest.raises(ValueError, match="max_len"):
        tr.Trainer(ModelConfig(vocab_size=data.vocab_size, d_model=8, n_heads=1, n_layers=1, max_len=8), data)


def test_huge_learning_rate_stops_with_last_good_params():
    data = tiny_text()
    trainer = tr.Trainer(tiny_cfg(data), data, tr.TrainConfig(lr=1e3, warmup_steps=0), seed=0)
    with pytest.raises(tr.TrainingDiverged, match="learning rate"):
        for _ in range(50):
            trainer.step(1)
    assert trainer.status == "diverged"
    assert "learning rate" in trainer.message
    assert all(np.isfinite(a).all() for a in flatten(trainer.params).values())
    assert len(trainer.history) == trainer.steps
    assert all(math.isfinite(x) and x <= trainer.max_loss for x in trainer.history)
    with pytest.raises(tr.TrainingDiverged):
        trainer.step(1)  # stays stopped until the learning rate changes
    with pytest.raises(ValueError, match="learning rate"):
        trainer.set_learning_rate(-1.0)
    trainer.set_learning_rate(1e-3)
    assert trainer.status == "training" and trainer.train_cfg.lr == trainer.opt.cfg.lr == 1e-3
    assert all(math.isfinite(x) for x in trainer.step(3))


def test_checkpoint_resume_continues_exactly(tmp_path):
    task = SyntheticTask("copy", length=4, n_symbols=6)
    cfg = tiny_cfg(task, pos_encoding="learned")
    a = tr.Trainer(cfg, task, tr.TrainConfig(lr=3e-3, batch_size=8, decay_steps=20), seed=3)
    a.step(5)
    a.evaluate()
    path = save_checkpoint(a, tmp_path / "ckpt")
    assert path.suffix == ".npz"
    b = load_checkpoint(path, task)
    assert b.steps == 5 and b.history == a.history and b.val_history == a.val_history
    assert b.seconds == a.seconds > 0
    assert b.cfg == a.cfg and b.train_cfg == a.train_cfg
    assert a.step(4) == b.step(4)
    for name, arr in flatten(a.params).items():
        np.testing.assert_array_equal(arr, flatten(b.params)[name])
    with pytest.raises(ValueError, match="trained on"):
        load_checkpoint(path, SyntheticTask("reverse", length=4, n_symbols=6))


def test_cli_trains_and_saves_a_model_with_its_provenance(tmp_path, capsys):
    out = tmp_path / "copy_tiny"
    argv = ["--data", "copy", "--task-length", "3", "--symbols", "4", "--d-model", "8", "--heads", "2",
            "--layers", "1", "--steps", "6", "--batch", "4", "--eval-every", "3", "--warmup", "2",
            "--checkpoint", str(tmp_path / "ck"), "--out", str(out)]
    cli.main(argv)
    _, cfg, meta = load(out)
    assert cfg.max_len == 6 and cfg.vocab_size == 6
    assert meta["steps"] == 6 and meta["command"].startswith("python -m tools.train --data copy")
    assert meta["tokenizer"] == {"kind": "char", "chars": "ABCD|"}
    assert meta["task"] == {"kind": "copy", "length": 3, "n_symbols": 4}
    for key in ("train_loss", "val_loss", "bigram_val_loss", "wall_time_s"):
        assert math.isfinite(meta[key])
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["val_loss"] == meta["val_loss"]
    # the training log, one entry per evaluation, as printed (Circuit draws its curve from it)
    assert meta["log"]["step"] == [3, 6] and len(meta["log"]["train_loss"]) == len(meta["log"]["val_loss"]) == 2
    assert all(math.isfinite(x) for x in meta["log"]["val_loss"])
    cli.main([*argv[:-2], "--steps", "8", "--resume", "--out", str(out)])  # resume to step 8
    assert load(out)[2]["steps"] == 8 and load(out)[2]["log"]["step"] == [8]  # logged from where it resumed


def test_cli_on_the_documentation_records_the_corpus_it_read(tmp_path, capsys):
    out = tmp_path / "pydoc_tiny"
    cli.main(["--data", "pydoc", "--context", "8", "--d-model", "8", "--heads", "2", "--layers", "1", "--steps", "2",
              "--batch", "2", "--eval-every", "2", "--out", str(out)])
    meta = load(out)[2]  # load checks the recorded digest against the shipped file
    assert pydoc_record().items() <= meta.items() and meta["corpus_digest"] == text_digest(pydoc_text())


def test_the_corpus_command_writes_the_same_bytes_for_the_same_text(tmp_path, capsys):
    first, second = tmp_path / "a.txt.gz", tmp_path / "b.txt.gz"
    assert corpus_cli.main(["--out", str(first)]) == corpus_cli.main(["--out", str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()  # no time or name in the gzip header
    written = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    with gzip.open(first, "rt", encoding="utf-8") as f:
        assert text_digest(f.read()) == written["digest"]


def test_core_has_no_command_line_checkpoints_or_process_tuning():
    """core stays a library a student reads: argparse, ctypes and checkpoint files live in tools/."""
    import inspect

    source = inspect.getsource(tr)
    for word in ("argparse", "ctypes", "mallopt", "np.savez", "def main"):
        assert word not in source, word
    assert not hasattr(tr.Trainer, "save_checkpoint") and not hasattr(tr, "keep_freed_memory")
