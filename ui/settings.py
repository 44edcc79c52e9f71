"""The shared sidebar: device selector and global seed, read by every page through one helper."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.environment import available_devices
from core.seeding import MAX_SEED, seed_everything
from ui.i18n import _, render_language_choice
from ui.links import BOUND

DEVICE_KEY = "sidebar.device"
SEED_KEY = "sidebar.seed"
CUDNN_KEY = "sidebar.cudnn_deterministic"
DEFAULT_SEED = 0


@dataclass(frozen=True)
class Settings:
    """What the sidebar decided for this run: the torch device string, the global seed, and
    whether the notes' cuDNN switches (deterministic=True, benchmark=False) are on."""

    device: str
    seed: int
    cudnn_deterministic: bool = False


def render_sidebar() -> Settings:
    """Draw the shared sidebar controls and apply the seed. Called once per run, by app.py."""
    devices = available_devices()
    with st.sidebar:
        st.subheader(_("Settings"), anchor=False)
        render_language_choice()
        device = st.selectbox(
            _("Device"),
            devices,
            key=DEVICE_KEY,
            **BOUND,
            help=_("`cpu` is always there; `cuda:N` appears only when PyTorch sees GPU N."),
        )
        seed = st.number_input(
            _("Global random seed"),
            min_value=0,
            max_value=MAX_SEED,
            value=DEFAULT_SEED,
            step=1,
            key=SEED_KEY,
            **BOUND,
            help=_("Seeds random, numpy and torch (CPU and CUDA) at the start of every run."),
        )
        cudnn = st.toggle(
            _("cuDNN deterministic"),
            value=False,
            key=CUDNN_KEY,
            **BOUND,
            help=_(
                "The notes' switches (004:23, 004:26): torch.backends.cudnn.deterministic = "
                "True and benchmark = False, applied with the seed at the start of every run. "
                "Slower convolutions on a GPU; no effect on the CPU. Off restores PyTorch's "
                "defaults. See Home for what it does and does not cover."
            ),
        )
        if len(devices) == 1:
            st.caption(_("No CUDA device found: everything runs on the CPU."))
    # The one place where the seed (and the cuDNN switches, which like the generators are
    # process-wide) is applied: every rerun starts from the same state.
    seed_everything(int(seed), cudnn_deterministic=bool(cudnn))
    return Settings(device=str(device), seed=int(seed), cudnn_deterministic=bool(cudnn))


def current_settings() -> Settings:
    """The sidebar's current choice, for pages. Falls back to defaults when run without app.py."""
    devices = available_devices()
    device = st.session_state.get(DEVICE_KEY, devices[0])
    if device not in devices:  # e.g. a stale cuda:N after the GPU disappeared
        device = devices[0]
    seed = int(st.session_state.get(SEED_KEY, DEFAULT_SEED))
    cudnn = bool(st.session_state.get(CUDNN_KEY, False))
    return Settings(device=device, seed=seed, cudnn_deterministic=cudnn)
