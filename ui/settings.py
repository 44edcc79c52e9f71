"""The shared sidebar: device selector and global seed, read by every page through one helper."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.environment import available_devices
from core.seeding import MAX_SEED, seed_everything

DEVICE_KEY = "sidebar.device"
SEED_KEY = "sidebar.seed"
DEFAULT_SEED = 0


@dataclass(frozen=True)
class Settings:
    """What the sidebar decided for this run: the torch device string and the global seed."""

    device: str
    seed: int


def render_sidebar() -> Settings:
    """Draw the shared sidebar controls and apply the seed. Called once per run, by app.py."""
    devices = available_devices()
    with st.sidebar:
        st.subheader("Settings", anchor=False)
        device = st.selectbox(
            "Device",
            devices,
            key=DEVICE_KEY,
            help="`cpu` is always there; `cuda:N` appears only when PyTorch sees GPU N.",
        )
        seed = st.number_input(
            "Global random seed",
            min_value=0,
            max_value=MAX_SEED,
            value=DEFAULT_SEED,
            step=1,
            key=SEED_KEY,
            help="Seeds random, numpy and torch (CPU and CUDA) at the start of every run.",
        )
        if len(devices) == 1:
            st.caption("No CUDA device found: everything runs on the CPU.")
    # The one place where the seed is applied: every rerun starts from the same RNG state.
    seed_everything(int(seed))
    return Settings(device=str(device), seed=int(seed))


def current_settings() -> Settings:
    """The sidebar's current choice, for pages. Falls back to defaults when run without app.py."""
    devices = available_devices()
    device = st.session_state.get(DEVICE_KEY, devices[0])
    if device not in devices:  # e.g. a stale cuda:N after the GPU disappeared
        device = devices[0]
    seed = int(st.session_state.get(SEED_KEY, DEFAULT_SEED))
    return Settings(device=device, seed=seed)
