"""A chunked block's carried clock: its input stamps raised to it (``raise_stamps``), in place
only on the arrays a piece made for itself alone (``fast_cut.Piece.owned``); an input cut
inside its stream closed by a borrowed ``D`` (``fast_cut.Piece.slots``); leftovers and
two-step pieces kept with their closed forms (what a block taking them whole runs on); the rest of
a piece as a view of its arrays (:meth:`Stream.after`)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflow.sim.engines import fast_cut
from fuseflow.sim.engines.fast_stream import DONE_CODE, Stream, from_tokens, raise_stamps, with_done
from fuseflow.sim.tokens import stream


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(st.integers(0, 6), max_size=12), monotone=st.booleans(), shift=st.integers(0, 5),
       floor=st.integers(-2, 40), owned=st.booleans(), seed=st.integers(0, 9))
def test_raised_stamps_are_the_elementwise_maximum(steps, monotone, shift, floor, owned, seed):
    """Whatever the path (bisected prefix or full pass, copy or in place), the stamps are
    ``max(stamp, floor)``; a stream not owned keeps its array untouched."""
    base = np.cumsum(steps, dtype=np.int64).astype(np.int32)
    if not monotone:
        base = np.random.default_rng(seed).permutation(base)
    s = Stream(np.full(len(base), -1, np.int8), np.zeros(len(base), np.int32), base, monotone, shift=shift)
    before = base.copy()
    want = np.maximum(before + shift, floor) if floor > 0 else before + shift
    got = raise_stamps(s, floor, owned)
    assert got.time.tolist() == want.tolist()
    assert got.monotone == monotone
    if not owned:
        assert base.tolist() == before.tolist()
    elif got is not s:
        assert got.base is base  # raised where it was


def test_an_owned_stream_below_the_floor_is_raised_in_place_up_to_its_first_stamp_above():
    s = Stream(np.full(5, -1, np.int8), np.zeros(5, np.int32), np.array([1, 2, 6, 9, 9], np.int32), True,
               gap=0, shift=1)
    got = raise_stamps(s, 5, owned=True)
    assert got.base is s.base
    assert s.base.tolist() == [4, 4, 6, 9, 9]
    assert got.time.tolist() == [5, 5, 7, 10, 10]


def _shared(a: Stream, b: Stream) -> bool:
    return any(np.shares_memory(x, y) for x in (a.code, a.base) for y in (b.code, b.base))


def _producer_piece(text: str) -> Stream:
    """A producer's output piece as a chunked run hands it on: its stamps (shared with the
    producer's other outputs) and its closed form, a view of the same arrays plus a ``D``."""
    closed = from_tokens(stream(text + " D"), list(range(1, len(stream(text)) + 2)))
    closed.monotone = True
    piece = closed.head(len(closed) - 1)
    piece.closed = closed
    return piece


def test_a_piece_owns_only_the_inputs_it_copied():
    """An input consumed whole runs on its producer's closed stream and an input cut inside
    its stream on a view of it (both shared with the producer's other consumers: not owned);
    a cut that cannot borrow its D (a walked input taken whole) is a copy (owned)."""
    a, b = _producer_piece("0 1 S0"), _producer_piece("2 3 4 S0 5")
    piece = fast_cut._prefixes([a, b], [len(a), 4])
    assert piece.owned == [False, False]
    assert piece.ins[0] is a.closed
    assert _shared(piece.ins[1], b)
    walked = fast_cut._prefixes([a, b], [len(a), 4], walked=0)
    assert walked.owned == [True, False]
    assert not _shared(walked.ins[0], a)


def test_a_walked_input_borrows_a_done_stamped_like_the_token_it_peeked():
    """A scanner's last reference peeked the next token to close its fiber: the borrowed D
    carries that token's stamp, as the copy would."""
    b = _producer_piece("2 3 4 5")
    copied = with_done(b.head(3), int(b.base[3]) + b.shift)
    piece = fast_cut._prefixes([b], [3], walked=0)
    assert piece.slots
    with piece.closing():
        assert _tokens(piece.ins[0]) == _tokens(copied)


def _tokens(s: Stream) -> list:
    return list(zip(s.code.tolist(), s.data.tolist(), s.time.tolist()))


def test_a_cut_input_borrows_the_next_token_for_its_done_while_the_piece_runs():
    """Inside ``closing`` the input is the prefix and a D stamped like its last token; after
    (also after an error) the stream holds its own tokens again."""
    b = _producer_piece("2 3 4 S0 5 S0")
    before = _tokens(b)
    piece = fast_cut._prefixes([b], [4])
    with piece.closing():
        inside = _tokens(piece.ins[0])
    assert inside == before[:4] + [(DONE_CODE, 0, before[3][2])]
    assert _tokens(b) == before
    try:
        with piece.closing():
            raise RuntimeError("block failed")
    except RuntimeError:
        pass
    assert _tokens(b) == before
    assert piece.aliases(piece.ins[0]) and not piece.aliases(_producer_piece("1 S0"))


def test_inputs_sharing_arrays_borrow_only_when_cut_at_the_same_token():
    """A coordinate and a value stream of one producer share tokens and stamps: cut at the same
    token they write the same D; cut at different tokens, both are copied."""
    crd = _producer_piece("2 3 4 S0 5 S0")
    val = Stream(crd.code, crd.data.astype(np.float32) + 0.5, crd.base, True)
    same = fast_cut._prefixes([crd, val], [4, 4])
    assert same.owned == [False, False] and len(same.slots) == 6
    with same.closing():
        assert _tokens(same.ins[0])[-1][0] == _tokens(same.ins[1])[-1][0] == DONE_CODE
    apart = fast_cut._prefixes([crd, val], [4, 2])
    assert apart.owned == [True, True] and not apart.slots


def test_a_walked_unit_owns_both_closed_inputs():
    """A repeater reading signals on a unit still being walked: both inputs are new arrays."""
    src = _producer_piece("7 8 S0")
    sig = _producer_piece("R R S0 R")
    piece = fast_cut.RULES["repeat"](None, [src, sig], [len(src), len(sig)])
    assert (piece.strip, piece.owned) == (2, [True, True])
    for s in piece.ins:
        assert not _shared(s, src) and not _shared(s, sig)


def test_a_leftover_is_copied_once_into_arrays_that_end_in_its_done():
    """``Stream.tail`` copies the tokens after a cut; its closed form is the same arrays with a
    D stamped like the last token, so a block taking the leftover whole copies nothing more."""
    s = _producer_piece("2 3 S0 4 5 S1")
    rest = s.tail(2)
    assert _tokens(rest) == _tokens(s)[2:]
    assert not _shared(rest, s)
    assert _tokens(rest.closed) == _tokens(rest) + [(DONE_CODE, 0, int(rest.time[-1]))]
    assert np.shares_memory(rest.closed.code, rest.code)


def test_a_walked_unit_is_closed_by_its_close_and_done_in_one_copy():
    s = _producer_piece("2 3 4")
    closed = fast_cut._close_unit(s)
    last = int(s.time[-1])
    assert _tokens(closed) == _tokens(s) + [(0, 0, last), (DONE_CODE, 0, last)]


def test_two_step_pieces_keep_a_closed_form_only_of_their_own_arrays():
    """A piece closed by two synthetic steps: an output the block made itself keeps its real
    tokens and the D step's token as its closed form; an output viewing an input keeps none
    (writing into it would change the input)."""
    from fuseflow.sim.engines.fast_chunked import _without_close

    src = _producer_piece("7 8 S0")
    piece = fast_cut.Piece([src.closed], [len(src)], 2)
    own = from_tokens(stream("1 2 S0 D"), [1, 2, 3, 4])
    closed = _without_close(own, piece)
    assert _tokens(closed) == [(-1, 1, 1), (-1, 2, 2), (DONE_CODE, 0, 4)]
    view = Stream(src.closed.code, src.closed.data, src.closed.base, True)
    before = _tokens(src.closed)
    assert _without_close(view, piece) is None
    assert _tokens(src.closed) == before


def test_the_rest_of_a_piece_is_a_view_closed_by_the_producers_done():
    piece = _producer_piece("0 1 S0 2 S1")
    rest = piece.after(2)
    assert [t for t, _ in rest.pairs()] == [t for t, _ in piece.pairs()][2:]
    assert np.shares_memory(rest.code, piece.code) and np.shares_memory(rest.base, piece.base)
    assert rest.closed.code[-1] == DONE_CODE and len(rest.closed) == len(rest) + 1
    assert np.shares_memory(rest.closed.code, piece.closed.code)
    rows = Stream(np.array([-1, 0], np.int8), None, np.zeros(2, np.int32),
                  rows=(np.zeros(1, np.int32), 1, np.int32))
    assert rows.after(1) is None  # a view would build the rows' payload whole
