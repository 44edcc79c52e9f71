"""The shared sidebar: device selector and global seed, read by every page through one helper."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.environment import available_devices
from core.seeding import MAX_SEED, set_cudnn_flags
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
            _("Random seed (this session)"),
            min_value=0,
            max_value=MAX_SEED,
            value=DEFAULT_SEED,
            step=1,
            key=SEED_KEY,
            **BOUND,
            help=_(
                "This session's seed: every random draw of the pages comes from a private "
                "generator made from it, so other visitors cannot change your results."
            ),
        )
        cudnn = st.toggle(
            _("cuDNN deterministic"),
            value=False,
            key=CUDNN_KEY,
            **BOUND,
            help=_(
                "The notes' switches (004:23, 004:26): torch.backends.cudnn.deterministic = "
                "True and benchmark = False. Process-wide on a GPU server (every visitor shares "
                "them); not applied without a GPU, where cuDNN is not used. Off restores "
                "PyTorch's defaults. See Home for what it does and does not cover."
            ),
        )
        if len(devices) == 1:
            st.caption(_("No CUDA device found: everything runs on the CPU."))
    # The seed is not applied to the process-wide generators: a server's sessions share them,
    # so one session's seeding would reseed another's draws mid-run. Pages pass settings.seed
    # to core, which draws from private generators. The cuDNN switches have no per-session
    # form; they are set where cuDNN runs (a GPU), process-wide, and Home says so.
    set_cudnn_flags(bool(cudnn))
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
