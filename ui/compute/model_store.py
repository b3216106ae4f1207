"""Models for the pages: the shipped trained ones in core/weights, and seeded random ones to compare with.

Weights are loaded once per process and shared by every session (ui.compute.memo.shared), so no page may
change them: that would change them for everybody. Cached functions of a model take its small `source`
tuple, never its arrays, and get the model back with from_source().
"""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import secrets
import string
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import streamlit as st

from core.model import ModelConfig, init_params
from core.model_file import flatten, load, unflatten
from core.tokenize import CharTokenizer
from store import runs
from store.engine import StoreError
from ui.compute import database
from ui.compute.memo import shared

WEIGHTS_DIR = Path(__file__).resolve().parents[2] / "core" / "weights"
# The random model's vocabulary: printable ASCII (letters, digits, punctuation, space) and the newline.
RANDOM_CHARS = string.ascii_letters + string.digits + string.punctuation + " \n"
RANDOM_SHAPE = dict(d_model=64, n_heads=4, n_layers=2, max_len=64)


@dataclass(frozen=True)
class Model:
    name: str
    params: dict  # read-only arrays, shared by every session
    cfg: ModelConfig
    tokenizer: CharTokenizer
    meta: dict
    trained: bool
    source: tuple  # small and hashable: ("file", name, mtime_ns) or ("random", seed, like)


def _files(name: str) -> tuple[Path, Path]:
    return WEIGHTS_DIR / f"{name}.json", WEIGHTS_DIR / f"{name}.npz"


def shipped_models() -> list[str]:
    """Names of the saved models in core/weights (a NAME.json with its NAME.npz), sorted."""
    try:
        changed = WEIGHTS_DIR.stat().st_mtime_ns  # a file added, removed or renamed into place changes the folder
    except OSError:
        return []
    return list(_listed(WEIGHTS_DIR, changed))


@functools.lru_cache(maxsize=4)
def _listed(folder: Path, changed_ns: int) -> tuple[str, ...]:
    """The folder's models as they were when it last changed: a page asks for a model several times a move, and
    listing the folder each time (a glob, then a stat a file) cost about 0.1 ms a call; one stat of the folder
    costs a few microseconds."""
    return tuple(sorted(p.stem for p in folder.glob("*.json") if p.with_suffix(".npz").is_file()))


def char_models() -> list[str]:
    """The shipped character language models (trained on text), names starting with "char" first.

    Models trained on a synthetic task (copy, reverse, induction: meta holds "task") read characters
    too, but only their task's symbols; they are not offered as language models.
    """
    names = [n for n in shipped_models() if _describe(n) == ("char", False)]
    return sorted(names, key=lambda n: (not n.startswith("char"), n))


def default_model() -> str | None:
    """The trained character model a page should start with, or None while there is none."""
    names = char_models()
    return names[0] if names else None


def _describe(name: str) -> tuple[str | None, bool]:
    try:
        return _peek(str(_files(name)[0]), _files(name)[0].stat().st_mtime_ns)
    except OSError:
        return None, False


@shared(64)
def _peek(json_path: str, mtime_ns: int) -> tuple[str | None, bool]:
    """(tokenizer kind, trained on a synthetic task?) from a saved model's JSON; the arrays are not read."""
    try:
        meta = json.loads(Path(json_path).read_text()).get("meta", {})
        return meta.get("tokenizer", {}).get("kind"), "task" in meta
    except (OSError, ValueError, AttributeError):
        return None, False


def load_model(name: str) -> Model:
    """A shipped model by name. Raises ValueError if there is no such model or it cannot be read."""
    if name not in shipped_models():
        raise ValueError(f"There is no saved model called {name!r}; available: {shipped_models() or 'none'}.")
    json_path, npz_path = _files(name)
    # The modification time is part of the key: a retrained file is read again, not served stale.
    return _load(str(json_path), max(json_path.stat().st_mtime_ns, npz_path.stat().st_mtime_ns))


@shared(8, spinner="Loading the model…")
def _load(json_path: str, mtime_ns: int) -> Model:
    path = Path(json_path)
    try:
        params, cfg, meta = load(path)
    except (OSError, KeyError, TypeError, ValueError) as err:
        raise ValueError(f"The saved model {path.stem!r} could not be read: {err}") from None
    tok = meta.get("tokenizer", {})
    if tok.get("kind") != "char":
        raise ValueError(f"The saved model {path.stem!r} does not read characters (tokenizer: {tok.get('kind')!r}).")
    tokenizer = CharTokenizer.from_dict(tok)
    if tokenizer.vocab_size != cfg.vocab_size:
        raise ValueError(f"The saved model {path.stem!r} has {cfg.vocab_size} token ids but its tokenizer "
                         f"knows {tokenizer.vocab_size} characters.")
    return Model(path.stem, params, cfg, tokenizer, meta, True, ("file", path.stem, mtime_ns))


# ---- models trained in this browser session (this module is their one owner) ----------------------------

SESSION_KEY = "session_models"  # name -> Model in st.session_state, oldest first; this session only
MAX_SESSION_MODELS = 5  # trained models kept per session; the oldest go first


def session_shelf(state=None) -> dict:
    """The live dict of this session's trained models (name -> Model) in `state` (st.session_state by
    default), made on first use. The Training page adds to it only through add_session_model()."""
    state = st.session_state if state is None else state
    models = state.get(SESSION_KEY)
    if not isinstance(models, dict):
        models = state[SESSION_KEY] = {}
    return models


def add_session_model(shelf: dict, model: Model) -> None:
    """Keep `model` under its name (replacing an older snapshot of it) as the newest; at most
    MAX_SESSION_MODELS are kept, the oldest dropped first."""
    shelf.pop(model.name, None)  # re-inserted last: the dict stays in order of recency
    shelf[model.name] = model
    for name in list(shelf)[: max(0, len(shelf) - MAX_SESSION_MODELS)]:
        del shelf[name]


def session_models() -> dict:
    """The models this session trained on the Training page (name -> Model), oldest first: a copy."""
    models = st.session_state.get(SESSION_KEY, {})
    return dict(models) if isinstance(models, dict) else {}


def get_model(name: str) -> Model:
    """A model by name: one trained in this session, a run a link names ("run:AbC123xy"), else a shipped one
    (ValueError if none of these)."""
    trained_here = session_models()
    if name in trained_here:
        return trained_here[name]
    if name.startswith(RUN_PREFIX):
        run_id = run_id_of(name)
        mine = [m for m in trained_here.values() if m.meta.get("run_id") == run_id]
        return mine[-1] if mine else shared_run(run_id)
    return load_model(name)


# ---- trained runs kept in the app's database, for a link (store.runs) ---------------------------

RUN_PREFIX = "run:"  # fm_model=run:AbC123xy names a stored run (its name may follow: "run:AbC123xy · copy task · …")
OWNER_KEY = "_run_owner"  # this browser session's random token: its runs beyond the newest few are deleted


def link_name(model: Model) -> str:
    """What the picker shows and a link carries for this model: "run:<id> · <its name>" once it is stored, else
    its name. (A picker bound to the link writes its label into the link, so the id and the name go together.)"""
    run_id = model.meta.get("run_id")
    return f"{RUN_PREFIX}{run_id} · {model.name}" if run_id else model.name


def run_id_of(value: str) -> str:
    """The id in "run:AbC123xy" or "run:AbC123xy · its name"."""
    return value.removeprefix(RUN_PREFIX).split(" ", 1)[0]


def keep_for_link(model: Model, state=None) -> tuple[Model, str | None]:
    """Store a model trained in this session in the app's database, so a link can name it: (the model, now
    carrying its run id and expiry, None), or (the model as it was, the sentence saying why a link cannot
    carry it) when the database cannot be reached or the run is over the size cap. Each snapshot gets an id
    of its own (a run resumed and stopped again is stored anew): a link, once shared, always opens the same
    weights, and a server process may keep them in memory by id."""
    state = st.session_state if state is None else state
    owner = state.setdefault(OWNER_KEY, secrets.token_hex(16))
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **flatten(model.params))  # the arrays as core.model_file.save writes them, in memory
    meta = {k: v for k, v in model.meta.items() if k not in ("run_id", "expires_at")}
    for _ in range(3):  # an id already in use (1 in 2e14 a draw) is drawn again, never another's run replaced
        run_id = runs.new_id()
        try:
            expires = runs.store(database.engine(), run_id, owner, model.name, buffer.getvalue(),
                                      model.cfg.to_dict(), meta, time.time())
            break
        except runs.RunIdTaken:
            continue
        except (StoreError, ValueError) as error:
            return model, str(error)
    else:
        return model, "No free id was found for this run: stop and store it again."
    return dataclasses.replace(model, meta={**meta, "run_id": run_id, "expires_at": expires}), None


def shared_run(run_id: str) -> Model:
    """The stored run `run_id`, read from the database once per process. ValueError with a sentence for the
    reader when there is no such run, it has expired, or the database cannot be read."""
    if not runs.valid_id(run_id):
        raise ValueError(f"“{run_id[:20]}” is not the id of a trained run (those are {runs.ID_LENGTH} letters "
                         "and digits).")
    model = _stored_run(run_id)
    if model.meta["expires_at"] < time.time():
        raise ValueError(expired_message(run_id))
    return model


OWN_TEXT = "your text"  # the data of a run on the trainer's own text (lessons.training names it so)
LINK_PROBLEMS = "tr_link_problems"  # session state: run name -> (step, why the store could not keep that snapshot)


def expired_message(run_id: str) -> str:
    return (f"The trained run {run_id} has expired: trained runs are kept {runs.EXPIRE_DAYS} days. "
            "Whoever shared the link can train it again on the Training page and share the new link.")


@shared(16, spinner="Loading the trained run…")
def _stored_run(run_id: str) -> Model:
    try:
        stored = runs.load(database.engine(), run_id, time.time())
    except runs.RunExpired:
        raise ValueError(expired_message(run_id)) from None
    except KeyError:  # expired runs are deleted when any run is stored: an old link usually ends here
        raise ValueError(f"No trained run {run_id} is kept on this server. Runs are deleted "
                         f"{runs.EXPIRE_DAYS} days after training, or sooner when the session that trained "
                         f"them stores {runs.PER_SESSION} newer ones or the server's store of runs is full "
                         "(the oldest go first); or the link was mistyped.") from None
    except StoreError:  # not cached (an error is not a value): the next visit asks the database again
        raise ValueError(f"The trained run {run_id} cannot be opened just now: the server's store of "
                         "trained runs is not answering. Try the link again later.") from None
    with np.load(io.BytesIO(stored.weights), allow_pickle=False) as data:
        flat = {name: data[name] for name in data.files}
    params = unflatten(flat)
    _freeze(params)
    meta = {**stored.meta, "run_id": stored.id, "expires_at": stored.expires_at,
            "trained_in": "the Training page, opened from a link"}
    name = stored.name
    if meta.get("data") == OWN_TEXT:  # "your text" was the trainer's: to whoever opens the link it is not theirs
        meta["data"] = "a text of the trainer's own (not stored)"
        name = name.replace(OWN_TEXT, "a shared text", 1)
    tokenizer = CharTokenizer.from_dict(meta["tokenizer"])
    return Model(name, params, ModelConfig(**stored.config), tokenizer, meta, True, ("run", stored.id))


def random_model(seed: int = 0, like: str | None = None) -> Model:
    """Seeded random weights (GPT-2's initialisation): what a model knows before any training.

    Without `like`: printable-ASCII characters, d_model 64, 4 heads, 2 layers, max_len 64.
    With like=NAME: the same configuration and tokenizer as that model (shipped, or trained in this
    session), for a fair comparison.
    """
    # The model's source (with its file time or training step) is in the key: a retrained model gets a new twin.
    return _random(int(seed), like, get_model(like).source if like is not None else None)


@shared(16)
def _random(seed: int, like: str | None, like_source: tuple | None) -> Model:
    if like is None:
        tokenizer = CharTokenizer(RANDOM_CHARS)
        cfg = ModelConfig(vocab_size=tokenizer.vocab_size, **RANDOM_SHAPE)
    else:
        base = from_source(like_source)
        tokenizer, cfg = base.tokenizer, base.cfg
    params = init_params(cfg, np.random.default_rng(seed))
    _freeze(params)
    meta = {"tokenizer": tokenizer.to_dict(), "note": "random initialisation, never trained"}
    return Model(f"random (seed {seed})", params, cfg, tokenizer, meta, False, ("random", seed, like))


def from_source(source: tuple) -> Model:
    """The model a `source` tuple names (for cached functions, which take small arguments)."""
    kind, *rest = source
    if kind == "random":
        return random_model(*rest)
    if kind == "file":
        return load_model(rest[0])
    if kind == "run":
        return shared_run(rest[0])
    if kind == "session":
        model = session_models().get(rest[0])
        if model is None:
            raise ValueError(f"The model {rest[0]!r} was trained in another session, or has been replaced.")
        return model
    raise ValueError(f"Unknown model source {source!r}.")


def _freeze(tree) -> None:
    for value in tree.values() if isinstance(tree, dict) else tree:
        if isinstance(value, (dict, list)):
            _freeze(value)
        else:
            value.setflags(write=False)
