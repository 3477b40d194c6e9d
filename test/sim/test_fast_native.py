"""The fast engine's compiled kernels (``sim/engines/fast_native.py``) against plain Python
loops written from their definitions, on random inputs: the clock recurrence (one or two
streams, shifts, latency, selected steps, int32 and int64 stamps, in place) and the order-1
sparse accumulator's fold and layout (float32 sums in arrival order, scalars and tiles), a dense
scan's row gather."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflow.sim.engines import fast_native, fast_stream


def test_kernel_codes_are_the_stream_codes():
    assert (fast_native.DATA, fast_native.EMPTY, fast_native.DONE, fast_native.REPEAT) == (
        fast_stream.DATA, fast_stream.EMPTY_CODE, fast_stream.DONE_CODE, fast_stream.REPEAT_CODE)


def _recurrence(arrival, ii, latency, caught_up):
    clock, out = -ii, []
    for a in arrival:
        clock = a if caught_up else max(clock + ii, a)
        out.append(clock + latency)
    return out


@settings(max_examples=80, deadline=None)
@given(st.data(), st.integers(0, 3), st.integers(0, 3), st.sampled_from([np.int32, np.int64]))
def test_clock_kernels_solve_the_recurrence(data, ii, latency, dtype):
    n = data.draw(st.integers(1, 40))
    a = np.array(data.draw(st.lists(st.integers(0, 60), min_size=n, max_size=n)), dtype=dtype)
    b = np.array(data.draw(st.lists(st.integers(0, 60), min_size=n, max_size=n)), dtype=np.int64)
    sa, sb = data.draw(st.integers(0, 5)), data.draw(st.integers(0, 5))
    caught_up = data.draw(st.booleans())
    if caught_up:  # what the flag promises: non-decreasing arrivals at least ii apart
        a = np.cumsum(a % 3 + ii).astype(dtype)
        b = np.cumsum(b % 3 + ii)
    one = _recurrence((a.astype(np.int64) + sa).tolist(), ii, latency, caught_up)
    two = _recurrence(np.maximum(a.astype(np.int64) + sa, b + sb).tolist(), ii, latency, caught_up)
    select = np.unique(np.append(np.flatnonzero(data.draw(
        st.lists(st.booleans(), min_size=n, max_size=n))), n - 1))
    none = np.zeros(0, dtype=np.int64)
    out = np.empty(n, dtype=dtype)
    assert fast_native.clocks_1(a, sa, ii, latency, caught_up, out, none) == one[-1]
    assert out.tolist() == one
    fast_native.clocks_2(a, sa, b, sb, ii, latency, caught_up, out, none)
    assert out.tolist() == two
    picked = np.empty(len(select), dtype=dtype)
    fast_native.clocks_2(a, sa, b, sb, ii, latency, caught_up, picked, select)
    assert picked.tolist() == [two[i] for i in select]
    fast_native.clocks_1(a, sa, ii, latency, caught_up, a, none)  # in place
    assert a.tolist() == one


def test_raw_stamps_give_the_clocks_of_their_running_maximum():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 500, 300).astype(np.int32)  # late and early tokens anywhere
    none = np.zeros(0, dtype=np.int64)
    raw, run = np.empty_like(a), np.empty_like(a)
    fast_native.clocks_1(a, 0, 2, 1, False, raw, none)
    fast_native.clocks_1(np.maximum.accumulate(a), 0, 2, 1, False, run, none)
    assert raw.tolist() == run.tolist()


def _accumulate(codes, vcodes, crds, vals):
    """Per flush, ``{crd: float32 sum}`` in arrival order (pairs after the last flush are
    dropped), and the number of pairs."""
    flushes, table, pairs = [], {}, 0
    for code, vcode, c, v in zip(codes, vcodes, crds, vals):
        if code == fast_stream.DATA and vcode == fast_stream.DATA:
            pairs += 1
            table[c] = table.get(c, np.zeros_like(v)) + v
        elif code >= 1:
            flushes.append((code, table))
            table = {}
    return flushes, pairs


@settings(max_examples=80, deadline=None)
@given(st.data(), st.sampled_from([(), (2,), (2, 3)]), st.booleans())
def test_accumulator_kernel_folds_in_arrival_order(data, tile, track):
    n = data.draw(st.integers(0, 60))
    # wide tables: a tracked flush of a few keys sorts them instead of reading the table
    width = data.draw(st.one_of(st.integers(1, 9), st.integers(33, 100)))
    codes = data.draw(st.lists(st.sampled_from([-1, -1, -1, -2, 0, 1, 2]), min_size=n, max_size=n))
    vcodes = [c if c >= 0 else data.draw(st.sampled_from([-1, -1, -2])) for c in codes]
    crds = data.draw(st.lists(st.integers(0, width - 1), min_size=n, max_size=n))
    size = n * int(np.prod(tile, dtype=np.int64))
    floats = st.lists(st.floats(-1e6, 1e6, width=32), min_size=size, max_size=size)
    vals = np.array(data.draw(floats), dtype=np.float32).reshape((n,) + tile)
    cc, vc = np.array(codes + [-3], dtype=np.int8), np.array(vcodes + [-3], dtype=np.int8)
    crd = np.array(crds + [0], dtype=np.int16)
    val = np.concatenate([vals, np.zeros((1,) + tile, np.float32)])
    flushes, pairs = _accumulate(cc.tolist(), vc.tolist(), crd.tolist(), list(val))
    # the step clocks of two stamp streams read in lock step, computed in the same pass
    ii, latency, (sa, sb) = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3)), (2, 5)
    a = np.array(data.draw(st.lists(st.integers(0, 90), min_size=n + 1, max_size=n + 1)), np.int32)
    b = np.array(data.draw(st.lists(st.integers(0, 90), min_size=n + 1, max_size=n + 1)), np.int32)
    caught_up = data.draw(st.booleans())
    if caught_up:  # what the flag promises: non-decreasing arrivals at least ii apart
        a, b = np.cumsum(a % 3 + ii).astype(np.int32), np.cumsum(b % 3 + ii).astype(np.int32)
    clocks = _recurrence(np.maximum(a.astype(np.int64) + sa, b.astype(np.int64) + sb).tolist(),
                         ii, latency, caught_up)
    flush_stamps = [clocks[t] for t, code in enumerate(cc.tolist()) if code >= 1]
    bound = n + 1  # room for more than the entries: the rest is left alone
    out_code, out_crd = np.empty(bound, np.int8), np.empty(bound, np.int16)
    out_val, out_time = np.empty((bound,) + tile, np.float32), np.empty(bound, np.int32)
    total, got_pairs, last = fast_native.spacc_flush(
        cc, vc, crd, val, width, a, sa, b, sb, ii, latency, caught_up, track,
        out_code, out_crd, out_val, out_time)
    assert got_pairs == pairs
    assert last == clocks[-1]
    want = []
    for (code, table), stamp in zip(flushes, flush_stamps):
        want += [(-1, c, table[c].tobytes(), stamp) for c in sorted(table)]
        want.append((code - 1, 0, np.zeros(tile, np.float32).tobytes(), stamp))
    want.append((-3, 0, np.zeros(tile, np.float32).tobytes(), clocks[-1]))
    got = zip(out_code[:total].tolist(), out_crd[:total].tolist(), out_val, out_time[:total].tolist())
    assert [(a, b, c.tobytes(), d) for a, b, c, d in got] == want


@settings(max_examples=60, deadline=None)
@given(st.data(), st.integers(0, 3), st.integers(0, 2), st.sampled_from([np.int32, np.int64]))
def test_dense_fiber_kernel_lays_out_rows_at_their_clocks(data, ii, latency, dtype):
    n = data.draw(st.integers(1, 4))
    codes = []
    for _ in range(data.draw(st.integers(0, 6))):  # references, each maybe absorbing a stop
        codes.append(-1)
        codes += data.draw(st.lists(st.integers(0, 2), max_size=1))
    codes.append(-3)
    stamps = data.draw(st.lists(st.integers(0, 40), min_size=len(codes), max_size=len(codes)))
    shift = data.draw(st.integers(0, 3))
    want, clock, late = [], -ii, 0
    for i, code in enumerate(codes):
        late = max(late, stamps[i] + shift)
        if code == -1:
            clock = max(clock + ii, late)
            want += [(-1, j, clock + j * ii + latency) for j in range(n)]
            clock = max(clock + n * ii, late, stamps[i + 1] + shift)
            want.append((codes[i + 1] + 1 if codes[i + 1] >= 0 else 0, 0, clock + latency))
    clock = max(clock + ii, late)
    want.append((-3, 0, clock + latency))
    out_code, out_crd = np.empty(len(want), np.int8), np.empty(len(want), np.int16)
    out_time = np.empty(len(want), dtype)
    last = fast_native.dense_fibers(np.array(codes, np.int8), np.array(stamps, dtype), shift, n, ii,
                                    latency, out_code, out_crd, out_time)
    assert last == clock
    assert list(zip(out_code.tolist(), out_crd.tolist(), out_time.tolist())) == want


@settings(max_examples=60, deadline=None)
@given(st.data(), st.integers(0, 3), st.integers(0, 2))
def test_unit_clock_kernel_peeks_each_units_head_and_close(data, ii, latency):
    units = data.draw(st.integers(1, 6))
    src = np.array(data.draw(st.lists(st.integers(0, 50), min_size=2 * units, max_size=2 * units)),
                   dtype=np.int32)
    heads = np.arange(0, 2 * units, 2, dtype=np.int64)
    closes = np.array(data.draw(st.lists(st.booleans(), min_size=units, max_size=units)))
    closes[-1] = False
    per = data.draw(st.lists(st.integers(1, 3), min_size=units, max_size=units))
    per[-1] = 1
    sidx = np.cumsum(per)[:-1] - 1
    lead = np.array(data.draw(st.lists(st.integers(0, 60), min_size=sum(per), max_size=sum(per))),
                    dtype=np.int32)
    seen = np.repeat(heads, per)
    seen[sidx] += closes[:-1]
    arrival = np.maximum(lead + 2, np.maximum.accumulate(src + 1)[seen])
    want = _recurrence(arrival.tolist(), ii, latency, False)
    out = np.empty(len(lead), np.int32)
    last = fast_native.unit_clocks(lead, 2, src, 1, heads, sidx, closes, ii, latency, out)
    assert (out.tolist(), last) == (want, want[-1])
    gapped = np.cumsum(lead % 4 + ii).astype(np.int32)  # what lead_wins assumes
    fast_native.unit_clocks(gapped, 2, src, 1, heads, sidx, closes, ii, latency, out)
    wins = fast_native.lead_wins(gapped, 2, src, 1, heads, sidx, closes, ii)
    assert wins == (out.tolist() == (gapped + 2 + latency).tolist())


def test_repeat_layout_repeats_units_and_closes_them():
    # 5 S0 6 7 S1 S1 D: units 5 (absorbing S0), 6 (data follows), 7 (absorbing S1), a bare S1, D
    code = np.array([-1, 0, -1, -1, 1, 1, -3], np.int8)
    data = np.array([5, 0, 6, 7, 0, 0, 0], np.int32)
    heads = np.array([0, 2, 3, 5, 6])
    sidx = np.array([2, 3, 5, 6])  # signals R R S | S | R S | S | D
    out_code, out_data = np.empty(8, np.int8), np.empty(8, np.int32)
    fast_native.repeat_layout(code, data, heads, sidx, out_code, out_data)
    assert out_code.tolist() == [-1, -1, 1, 0, -1, 2, 2, -3]
    assert out_data.tolist() == [5, 5, 0, 0, 7, 0, 0, 0]
    tiles = np.stack([data, -data], axis=1).astype(np.float32)  # a tile per token, repeated whole
    out_tiles = np.empty((8, 2), np.float32)
    fast_native.repeat_layout(code, tiles, heads, sidx, out_code, out_tiles)
    assert out_tiles.tolist() == [[5, -5], [5, -5], [0, 0], [0, 0], [7, -7], [0, 0], [0, 0], [0, 0]]


def test_codes_are_counted_and_found():
    code = np.array([-1, 0, -2, -1, 1, -3], np.int8)
    assert [fast_native.count_equal(code, c) for c in (-3, -2, -1, 0, 1, 2)] == [1, 1, 2, 1, 1, 0]
    assert [fast_native.count_at_least(code, c) for c in (-3, 0, 1, 2)] == [6, 2, 1, 0]
    assert [fast_native.positions_of(code, c).tolist() for c in (-1, 2)] == [[0, 3], []]


def test_control_structures_are_compared():
    crd = np.array([-1, -2, 0, -1, 1, -3], np.int8)  # data, N, S0, data, S1, D
    assert fast_native.same_controls(crd, np.array([-1, -1, 0, -2, 1, -3], np.int8))
    assert not fast_native.same_controls(crd, np.array([-1, -1, 1, -1, 1, -3], np.int8))
    assert not fast_native.same_controls(crd, np.array([-1, -2, 0, -1, -1, -3], np.int8))
    assert not fast_native.same_controls(crd, np.array([-1, -2, 0, -1, 1, -1], np.int8))
    assert fast_native.contains(crd, -2) and not fast_native.contains(crd, 2)


@settings(max_examples=80, deadline=None)
@given(st.data(), st.sampled_from([np.int16, np.int32, np.int64]))
def test_array_loads_gather_zero_n_and_count_or_decline(data, dtype):
    n = data.draw(st.integers(0, 30))
    vals = np.array(data.draw(st.lists(st.floats(-1e6, 1e6, width=32), max_size=8)), np.float32)
    codes = data.draw(st.lists(st.sampled_from([-1, -1, -2, 0, 1, -3]), min_size=n, max_size=n))
    refs = np.array(data.draw(st.lists(st.integers(-2, 9), min_size=n, max_size=n)), dtype)
    code = np.array(codes, np.int8)
    out = np.empty(n, np.float32)
    got = fast_native.gather_values(code, refs, vals, out)
    if any(not 0 <= r < len(vals) for r in refs.tolist()):
        assert got == -1
        return
    assert got == codes.count(-1)
    want = [0.0 if c == -2 else vals[r] for c, r in zip(codes, refs.tolist())]
    assert np.array_equal(out, np.array(want, np.float32))


@settings(max_examples=80, deadline=None)
@given(st.data(), st.sampled_from([1, 3]), st.booleans())
def test_fiber_sum_kernel_adds_each_fibers_values_in_arrival_order(data, size, compact):
    n = data.draw(st.integers(0, 40))
    codes = data.draw(st.lists(st.sampled_from([-1, -1, -1, 0, 1, 2, -3]), min_size=n, max_size=n))
    rows = codes.count(-1) if compact else n
    floats = st.lists(st.floats(-1e6, 1e6, width=32), min_size=rows * size, max_size=rows * size)
    vals = np.array(data.draw(floats), np.float32).reshape(rows, size)
    stops = sum(c >= 0 for c in codes)
    want = [np.zeros(size, np.float32) for _ in range(stops + 1)]
    seen, g, j = [0] * (stops + 1), 0, 0
    for t, c in enumerate(codes):
        if c == -1:
            for e in range(size):  # one float32 addition per element, in order
                want[g][e] = np.float32(want[g][e] + vals[j if compact else t, e])
            seen[g], j = 1, j + 1
        elif c >= 0:
            g += 1
    out, got_seen = np.zeros((stops + 1, size), np.float32), np.zeros(stops + 1, np.uint8)
    fast_native.fiber_sums(np.array(codes, np.int8), vals, compact, out, got_seen)
    assert out.tobytes() == np.array(want, np.float32).reshape(stops + 1, size).tobytes()
    assert got_seen.tolist() == seen


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([-4, -3, -2, -1, 0, 1, 2]), max_size=30), st.integers(0, 3),
       st.integers(0, 35), st.integers(0, 33))
def test_positions_are_found_from_either_end(codes, c, m, k):
    code = np.array(codes, np.int8)
    above = [i for i, x in enumerate(codes) if x >= c]
    before = [i for i in above if i < k]
    assert fast_native.last_at_least(code, k, c) == (before[-1] + 1 if before else 0)


@settings(max_examples=120, deadline=None)
@given(n=st.integers(0, 3 * fast_native._HIT_BLOCK + 7), hits=st.sampled_from([0.0, 0.0005, 0.01, 0.3, 1.0]),
       c=st.integers(0, 2), at_least=st.booleans(), seed=st.integers(0, 999), data=st.data())
def test_hits_are_counted_and_found_from_either_end(n, hits, c, at_least, seed, data):
    """``count_hits`` and ``hit_positions`` against numpy, over several blocks of entries."""
    rng = np.random.default_rng(seed)
    code = rng.choice(np.array([-4, -3, -2, -1], np.int8), n)
    where = rng.random(n) < hits
    code[where] = rng.integers(0, 3, int(where.sum()))
    want = np.flatnonzero(code >= c if at_least else code == c).tolist()
    assert fast_native.count_hits(code, c, at_least) == len(want)
    first = data.draw(st.integers(-1, len(want) + 1))
    got = fast_native.hit_positions(code, c, at_least, first, len(want)).tolist()
    assert got == [want[i] if 0 <= i < len(want) else -1 for i in (first, first + 1)]


@settings(max_examples=120, deadline=None)
@given(st.lists(st.sampled_from([-4, -4, 0, 0, -3, -1]), max_size=20), st.data())
def test_signal_checks_find_each_units_stop(signals, data):
    units = data.draw(st.integers(0, 6))
    owner = np.array(data.draw(st.lists(st.booleans(), min_size=units, max_size=units)), bool)
    # the definition: R and S0 only, then D; one S0 per unit; no R on a unit without a fiber,
    # nor after the last unit's S0
    stops = [t for t, x in enumerate(signals) if x == 0]
    ok = (bool(signals) and signals[-1] == -3 and all(x in (-4, 0) for x in signals[:-1])
          and len(stops) == units)
    if ok:
        unit = 0
        for x in signals[:-1]:
            if x == 0:
                unit += 1
            elif unit >= units or not owner[unit]:
                ok = False
    out = np.empty(units, np.int64)
    assert fast_native.signal_stops(np.array(signals, np.int8), owner, out) == ok
    if ok:
        assert out.tolist() == stops


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(-5, 40), st.integers(-3, 6)), max_size=20))
def test_span_statistics(spans):
    lo = np.array([a for a, _ in spans], np.int64)
    hi = np.array([a + n for a, n in spans], np.int32)
    lengths = [n for _, n in spans]
    ends = [a + n - 1 for a, n in spans if n > 0]
    assert fast_native.span_stats(lo, hi) == (
        sum(lengths), min(lengths, default=0), max(ends, default=0), len(ends))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=12), st.lists(st.integers(-2, 12), max_size=12))
def test_segment_bounds_read_a_levels_positions(pos, refs):
    pos, refs = np.array(sorted(pos), np.int64), np.array(refs, np.int32)
    lo, hi = np.empty(len(refs), np.int64), np.empty(len(refs), np.int64)
    ok = fast_native.segment_bounds(pos, refs, lo, hi)
    assert ok == all(0 <= r < len(pos) - 1 for r in refs.tolist())
    if ok:
        assert lo.tolist() == pos[refs].tolist() and hi.tolist() == pos[refs + 1].tolist()


def _scan_definition(code, time, shift, lo, hi, table, starts, gather, ii, latency):
    """``scan_layout`` as a plain loop over its docstring's steps: ``(code, crd, ref, stamp)``
    per output token."""
    out, clock, late, r, i = [], -ii, 0, 0, 0

    def step(arrival, token):
        nonlocal clock
        clock = max(clock + ii, arrival)
        out.append((*token, clock + latency))

    while i < len(code):
        late = max(late, int(time[i]) + shift)
        k = int(code[i])
        if k in (-1, -2):
            if k == -1:
                a, b = int(lo[r]), int(hi[r])
                r += 1
                for child in range(a, b):
                    crd = (child - a, table[child], table[starts[child]] if len(starts) else 0)[gather]
                    step(late if child == a else 0, (-1, int(crd), child))
            else:
                step(late, (-2, 0, 0))
            nxt = int(code[i + 1])
            step(max(late, int(time[i + 1]) + shift), (nxt + 1 if nxt >= 0 else 0, 0, 0))
            if nxt >= 0:
                i += 1
                late = max(late, int(time[i]) + shift)
        else:
            step(late, (k + 1 if k >= 0 else k, 0, 0))
        i += 1
    return out


@settings(max_examples=120, deadline=None)
@given(st.data(), st.sampled_from([0, 1, 2]), st.integers(1, 3), st.integers(0, 2))
def test_scan_layout_kernel_lays_out_fibers_at_their_clocks(data, gather, ii, latency):
    units = data.draw(st.lists(st.sampled_from(["d", "d", "n", "s0", "s1"]), max_size=12))
    code, spans = [], []
    for u in units:
        if u in ("d", "n"):
            code.append(-1 if u == "d" else -2)
            if u == "d":
                a = data.draw(st.integers(-4 if gather == 0 else 0, 12))
                spans.append((a, a + data.draw(st.integers(0, 5))))
            if data.draw(st.booleans()):
                code.append(data.draw(st.integers(0, 2)))  # a stop it absorbs
        else:
            code.append(0 if u == "s0" else 1)
    code.append(-3)
    n = len(code)
    time = np.array(data.draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)), np.int32)
    lo = np.array([a for a, _ in spans], np.int64)
    hi = np.array([b for _, b in spans], np.int64)
    table = np.arange(100, 117, dtype=np.int64)[::-1].copy()
    starts = np.array(sorted(data.draw(st.lists(st.integers(0, 16), min_size=17, max_size=17))),
                      np.int64) if gather == 2 else np.zeros(0, np.int64)
    want = _scan_definition(code, time, 2, lo, hi, table, starts, gather, ii, latency)
    out = [np.empty(len(want), t) for t in (np.int8, np.int16, np.int32, np.int32)]
    last = fast_native.scan_layout(np.array(code, np.int8), time, 2, lo, hi, table, starts, gather,
                                   ii, latency, *out)
    assert list(zip(*(o.tolist() for o in out))) == [(c, x, ref, t) for c, x, ref, t in want]
    assert last == want[-1][3]


@settings(max_examples=60, deadline=None)
@given(st.data(), st.integers(1, 9), st.sampled_from([np.float32, np.float64]),
       st.sampled_from([np.int16, np.int32, np.int64]))
def test_row_gather_lays_out_each_row_and_its_close(data, n, dtype, ref_dtype):
    rows = data.draw(st.integers(1, 6))
    vals = np.arange(1, rows * n + 1 + data.draw(st.integers(0, n - 1)), dtype=dtype)
    refs = np.array(data.draw(st.lists(st.integers(0, rows - 1), max_size=12)), dtype=ref_dtype)
    out = np.full(len(refs) * (n + 1) + 1, -7, dtype=dtype)
    fast_native.gather_rows(vals, refs, n, out)
    want = [x for r in refs.tolist() for x in [*vals[r * n:r * n + n].tolist(), 0]] + [0]
    assert out.tolist() == want


@settings(max_examples=80, deadline=None)
@given(st.data(), st.sampled_from(sorted(fast_native.ALU_BINARY)))
def test_binary_values_are_numpys_and_check_the_codes(data, op):
    n = data.draw(st.integers(1, 30))
    codes = st.sampled_from([-1, -1, -1, 0, 1, -2])
    ca = np.array(data.draw(st.lists(codes, min_size=n, max_size=n)), np.int8)
    cb = ca.copy()
    if data.draw(st.booleans()):
        cb[data.draw(st.integers(0, n - 1))] = data.draw(codes)
    floats = st.floats(width=32, allow_nan=False, allow_infinity=False)
    xa = np.array(data.draw(st.lists(floats, min_size=n, max_size=n)), np.float32)
    xb = np.array(data.draw(st.lists(floats, min_size=n, max_size=n)), np.float32)
    out = np.empty(n, np.float32)
    got = fast_native.binary_values(fast_native.ALU_BINARY[op], ca, cb, xa, xb, out)
    if (ca != cb).any() or (ca == -2).any():
        assert got == -1
        return
    with np.errstate(over="ignore"):  # finite operands may overflow to inf, in both
        want = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](xa, xb)
    assert got == int((ca == -1).sum())
    assert out.tobytes() == want.tobytes()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([-3, -2, -1, -1, 0, 1, 2]), max_size=30), st.integers(0, 35),
       st.integers(0, 12))
def test_stop_positions_are_the_first_stops_within_the_prefix(codes, n, m):
    code = np.array(codes, np.int8)
    want = np.flatnonzero(code[:n] >= 0)[:m]
    out = np.full(m, -1, np.int64)
    k = fast_native.stop_positions(code, n, out)
    assert k == len(want) and out[:k].tolist() == want.tolist()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([-3, -2, -1, -1, 0, 1, 2]), max_size=30))
def test_unit_heads_and_closes_follow_their_definition(codes):
    code = np.array(codes, np.int8)
    owner = [c in (-1, -2) for c in codes]
    absorbed = [False] + [owner[i - 1] and codes[i] >= 0 for i in range(1, len(codes))]
    heads = [i for i in range(len(codes)) if not absorbed[i]]
    closes = [h + 1 < len(codes) and absorbed[h + 1] for h in heads]
    got_heads, got_closes = np.empty(len(codes), np.int64), np.empty(len(codes), bool)
    units = fast_native.unit_heads_closes(code, got_heads, got_closes)
    assert got_heads[:units].tolist() == heads and got_closes[:units].tolist() == closes
