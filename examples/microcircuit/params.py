"""The PD14 model's parameters, as the reference (INM-6/microcircuit-PD14-model, PyNEST) sets them, and the
quantities it derives from them for a given neuron and in-degree scaling."""

from __future__ import annotations

import dataclasses

import numpy as np

POPULATIONS = ('L23E', 'L23I', 'L4E', 'L4I', 'L5E', 'L5I', 'L6E', 'L6I')
FULL_NUM_NEURONS = np.array([20683, 5834, 21915, 5479, 4850, 1065, 14395, 2948])
# the full-scale rates the in-degree compensation assumes (spikes/s)
FULL_MEAN_RATES = np.array([0.903, 2.965, 4.414, 5.876, 7.569, 8.633, 1.105, 7.829])
# connection probabilities, [target, source]
CONN_PROBS = np.array([
    [0.1009, 0.1689, 0.0437, 0.0818, 0.0323, 0.0, 0.0076, 0.0],
    [0.1346, 0.1371, 0.0316, 0.0515, 0.0755, 0.0, 0.0042, 0.0],
    [0.0077, 0.0059, 0.0497, 0.135, 0.0067, 0.0003, 0.0453, 0.0],
    [0.0691, 0.0029, 0.0794, 0.1597, 0.0033, 0.0, 0.1057, 0.0],
    [0.1004, 0.0622, 0.0505, 0.0057, 0.0831, 0.3726, 0.0204, 0.0],
    [0.0548, 0.0269, 0.0257, 0.0022, 0.06, 0.3158, 0.0086, 0.0],
    [0.0156, 0.0066, 0.0211, 0.0166, 0.0572, 0.0197, 0.0396, 0.2252],
    [0.0364, 0.001, 0.0034, 0.0005, 0.0277, 0.008, 0.0658, 0.1443],
])
K_EXT = np.array([1600, 1500, 2100, 1900, 2000, 1900, 2900, 2100])
PSP_EXC_MEAN, WEIGHT_REL_STD, G = 0.15, 0.1, -4.0
DELAY_EXC_MEAN, DELAY_INH_MEAN, DELAY_REL_STD = 1.5, 0.75, 0.5
BG_RATE = 8.0  # spikes/s per external input
V0_MEAN = np.array([-68.28, -63.16, -63.33, -63.45, -63.11, -61.66, -66.72, -61.43])  # "optimized"
V0_STD = np.array([5.36, 4.57, 4.74, 4.94, 4.94, 4.55, 5.46, 4.48])
E_L, V_TH, V_RESET, C_M, TAU_M, TAU_SYN, T_REF = -65.0, -50.0, -65.0, 250.0, 10.0, 0.5, 2.0
DT = 0.1  # ms
T_PRESIM = 500.0  # ms


def is_excitatory(pop):
    return pop % 2 == 0


def psc_over_psp(c_m=C_M, tau_m=TAU_M, tau_syn=TAU_SYN):
    """The PSC (pA) whose exponential current peaks the potential at 1 mV."""
    sub = 1.0 / (tau_syn - tau_m)
    pre = tau_m * tau_syn / c_m * sub
    frac = (tau_m / tau_syn) ** sub
    return 1.0 / (pre * (frac ** tau_m - frac ** tau_syn))


def full_num_synapses():
    """Synapses per [target, source] pair at full scale: the fixed total number giving ``CONN_PROBS``."""
    prod = np.outer(FULL_NUM_NEURONS, FULL_NUM_NEURONS).astype(np.float64)
    return np.log(1.0 - CONN_PROBS) / np.log((prod - 1.0) / prod)


@dataclasses.dataclass(frozen=True)
class Derived:
    """What a network of a given scaling needs: sizes, synapse numbers, weights (pA), drive."""

    num_neurons: np.ndarray
    num_synapses: np.ndarray  # [target, source]
    weight_mean: np.ndarray  # [target, source], signed
    weight_ext: float
    k_ext: np.ndarray
    dc_amp: np.ndarray  # I_e per population (pA): the DC drive and/or the scaling compensation
    delay_mean: np.ndarray  # [target, source], ms
    delay_min: int = 1  # steps: every delay is at least this (the reference's: one step)


def derive(n_scaling=1.0, k_scaling=1.0, drive='dc', delay_min=1):
    """The reference's derived parameters: N and K scaling, with its compensation of reduced in-degrees.

    ``delay_min``: the shortest delay in steps; drawn delays that round to
    fewer are raised to it. The reference clips at one step; at two, the
    processes of a distributed run exchange spikes every second step.
    """
    if isinstance(delay_min, bool) or not isinstance(delay_min, (int, np.integer)) or delay_min < 1:
        raise ValueError(f'delay_min must be a whole number of steps >= 1, got {delay_min!r}.')
    if drive not in ('dc', 'poisson'):
        raise ValueError(f"drive must be 'dc' or 'poisson', got {drive!r}.")
    full_syn = full_num_synapses()
    num_neurons = np.round(FULL_NUM_NEURONS * n_scaling).astype(int)
    num_synapses = np.round(full_syn * n_scaling * k_scaling).astype(np.int64)
    k_ext = np.round(K_EXT * k_scaling).astype(int)
    psp = np.zeros((8, 8))
    psp[:, 0::2] = PSP_EXC_MEAN
    psp[:, 1::2] = PSP_EXC_MEAN * G
    psp[0, 2] = 2.0 * PSP_EXC_MEAN  # L4E -> L2/3E doubled
    factor = psc_over_psp()
    weight_mean = psp * factor
    weight_ext = PSP_EXC_MEAN * factor
    # DC drive: the mean of the Poisson input it replaces, from the unscaled K_ext
    dc_amp = BG_RATE * K_EXT * weight_ext * TAU_SYN * 0.001 if drive == 'dc' else np.zeros(8)
    if k_scaling != 1:
        indegree = full_syn / FULL_NUM_NEURONS[:, None]
        input_rec = np.sum(weight_mean * indegree * FULL_MEAN_RATES, axis=1)
        dc_amp = dc_amp + 0.001 * TAU_SYN * (1.0 - np.sqrt(k_scaling)) * input_rec
        if drive == 'poisson':
            dc_amp = dc_amp + 0.001 * TAU_SYN * (1.0 - np.sqrt(k_scaling)) * weight_ext * K_EXT * BG_RATE
        weight_mean = weight_mean / np.sqrt(k_scaling)
        weight_ext = weight_ext / np.sqrt(k_scaling)
    delay_mean = np.zeros((8, 8))
    delay_mean[:, 0::2] = DELAY_EXC_MEAN
    delay_mean[:, 1::2] = DELAY_INH_MEAN
    return Derived(num_neurons, num_synapses, weight_mean, float(weight_ext), k_ext, dc_amp, delay_mean, int(delay_min))
