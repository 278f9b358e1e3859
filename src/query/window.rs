//! Window-at-a-time execution of flat queries (a term, a boolean of
//! terms, or a phrase: the conjunction of its terms, its rarest leading,
//! whose matches its positions confirm) for collectors that can reject a document before it is scored:
//! by its field values alone (sorted search, the `SortCollector`), or by a
//! score bound under the queue's floor (score order, `TopDocsSink`). This
//! is the one loop behind every fast path; each shape has its kill switch
//! (`SearchOptions`: term, conjunction, disjunction).
//!
//! The loop hands the [`Sink`] windows of matches cut from decoded posting
//! blocks, so that rejecting a document costs an ord lookup in a tight
//! loop (the sink's [`Sink::filter`]) and never a virtual call or a score:
//!
//! - a term or a conjunction: the cheapest required clause (or the lone
//!   clause) leads, a window being the rest of its current block. A
//!   conjunction intersects a stretch of that block in bulk
//!   ([`kernels::intersect_into`]) with the next-cheapest clause's current
//!   block, and confirms the few survivors against any further clause by
//!   forward seeks;
//! - a disjunction: each clause's documents in the window are merged, or,
//!   in a dense window ranked by score, scored in bulk (below); the
//!   window's matches are counted by popcount over a bitset of its
//!   postings unless the total may be a lower bound.
//!
//! A window never extends past the current block of a clause that produces
//! candidates, so every clause still sits at or before each document when
//! it is offered, and scores are summed in clause order exactly as
//! [`daat`] sums them: every path returns the same bits.
//!
//! ## Pruning by score (a sink with a floor)
//!
//! Bounds come from one place, [`TermScorer::bound_until`]: a clause's
//! stored impacts over a range of documents, scored by the same f32
//! function as documents (monotone in frequency and length), so no
//! document scores above its bound. Sums of bounds are taken in clause
//! order in f32 (monotone rounding keeps them above every sum of scores),
//! and a candidate must beat the floor strictly (ties go to the lower
//! document, which came first).
//!
//! - **Blocks**: the lead moves to a block without decoding it; a block
//!   (or a second-level run of 32) whose window bound is at most the floor
//!   is passed by its skip data alone, counted by its length when the lead
//!   matches alone, dropped when the total may be a lower bound, and
//!   decoded and intersected only when a conjunction's total must be
//!   exact. A long lone term, or a conjunction of common terms, whose
//!   total may be a lower bound takes its lead's blocks best bound first
//!   ([`Exec::lead_by_bound`]), so that the floor rises before the
//!   weaker blocks come, and stops at the first that cannot beat it.
//! - **Candidates**: per window, the largest lead score that cannot
//!   compete given the other clauses' window bounds, and the least lead
//!   frequency that can at the block's least norm ([`crate::query::prune`]),
//!   reject a candidate by one compare, before the other clauses are
//!   positioned or scored; when nothing more is to be counted, the lead's
//!   window is thinned by them in bulk before it is intersected.
//! - **Disjunctions**: per window, the clauses whose bounds sum to at
//!   most the floor are non-essential (MaxScore): their documents are not
//!   offered. Once nothing more is to be counted, block-max MaxScore
//!   drives the union from the essential clauses alone: windows are cut
//!   from their blocks, non-essential clauses are never decoded block by
//!   block, only bounded by skip data and probed (seek and score) for a
//!   candidate whose best score (essential scores plus their bounds, in
//!   clause order) can still beat the floor.
//! - **Bulk scoring**: a dense union window ranked by score sums each
//!   clause's scores into a window array in clause order (the same bits
//!   as the per-document sum), without a seek per clause and document.
//!
//! - **Exact totals up front**: when every match must be counted and
//!   the clauses' presence bitmaps can tell how many there are
//!   ([`totals`]), they are counted before the loop, which then runs as
//!   though the total may be a lower bound ([`Counted`]).
//!
//! The sink decides where windows end ([`Sink::window`]) and may skip
//! whole ord blocks that cannot hold a competitive value; excluded and
//! deleted documents are removed before anything is offered. Only flat
//! shapes run here; anything else runs document-at-a-time.

use crate::collect::{AnyOrder, Counted, Sink, Window};
use crate::error::Result;
use crate::format::postings::{L2_BLOCKS, Presence};
use crate::kernels;
use crate::query::Occur;
use crate::query::bm25::TermWeight;
use crate::query::daat::{self, BlockBuf, NO_MORE, Roles, Scorer, TermScorer};
use crate::query::phrase::{self, PhrasePositions, PhraseTerms};
use crate::query::plan::{Node, TermNode};
use crate::query::prune::{self, LeadPrune};
use crate::query::totals;
use crate::read::LiveSegment;

/// How far above the floor the sum of a block's clause bounds may be for
/// their joint bound to be worth computing ([`Exec::joint_rejects`], in
/// [`Exec::block_rejected`]):
/// over seq-2/3/5 AND (lower-bound, 300 queries each), the joint bound
/// rejected half the blocks whose sum was within 2 % of the floor, a
/// tenth of those within 2-4 %, 3 % of those within 4-6 % and almost none
/// further up (93 % of its rejections within 2 %).
const JOINT_WITHIN: f32 = 1.02;

/// Words of a union window's bitsets (a bit per document from a
/// word-aligned base): the longest window scored in bulk.
const UNION_WORDS: usize = 256;
const _: () = assert!(UNION_WORDS.is_power_of_two());

/// The most decoded clauses whose sets a union window tells apart per
/// document ([`Exec::score_window`]): a byte each, and a table of 2^8
/// sums per window.
const MASK_CLAUSES: usize = 8;

/// Documents of a union window's sets and sums: a power of two at least
/// its span, so that an index masked by it needs no bounds check.
const MASK_SPAN: usize = (UNION_WORDS * 64).next_power_of_two();

/// The fewest blocks a conjunction's lead, or a lone term, has for it to
/// be led in the order of its block bounds ([`Exec::lead_by_bound`]).
/// For a lone term, bound order reads the block bounds of the best
/// second-level runs only, where document order reads every block bound
/// of each run the floor cannot pass whole (mid-df-1 lower-bound, 1M
/// documents: 104.6k to 78.7k instructions a query; 10M: 372.7k to
/// 129.8k, tantivy 466k), and the floor rises on the best blocks first.
/// Its heap cost more than that saved on terms of one to three runs while
/// every block bounded by the k-th score exactly was decoded; with those
/// passed from the k-th kept document on, bound order pays from eight
/// blocks (200,000 documents, 16 to 94 blocks a term: 53.5k to 47.5k
/// instructions a query, 1.02 to 0.94 s over 120,000 queries), and a
/// shorter term is read faster in document order (led so from two
/// blocks: single rare terms, 34.1k to 52.3k instructions a query).
const BY_BOUND_BLOCKS: usize = 8;

/// The most clauses besides the lead a conjunction led in the order of
/// its block bounds has. Each block taken out of order moves every other
/// clause back or forth by a search of its skip data, and meets their
/// blocks, skip data and the norms in no order, so less of them is in
/// cache. Two terms gain at every size measured (synthetic, 200,000
/// documents: 35 % fewer instructions a query, 16 % less time; 10M: 0.97
/// to 0.85 ms a query, tantivy 1.16). Three gain while the two other
/// lists are small ([`BY_BOUND_SPREAD`]): with the blocks taken out of
/// order prefetched and the other clauses found by branch-free searches,
/// seq-3 AND lower-bound took 17 % less time at 200,000 documents (user
/// time over the class's queries repeated, 1.01 to 0.84 s), 4 % less at
/// 1M (0.46 to 0.44 s), and 19 % more at 10M (0.80 to 0.95 s; 40 % more
/// before the prefetches). Five, under the same limit, gain 6 % at
/// 200,000 documents (seq-5, 0.96 to 0.90 s; they lost before the
/// prefetches) and nothing measurable at 1M or on the large-vocabulary
/// corpus.
const BY_BOUND_OTHERS: usize = 4;

/// The most bytes of postings the other clauses of a conjunction led in
/// the order of its block bounds may hold together when there are two
/// or more ([`BY_BOUND_OTHERS`]): about what a core's cache keeps of them
/// while their blocks are met out of order (two common terms hold about
/// 200 KiB at 200,000 synthetic documents, 1 MiB at 1M, 10 MiB at 10M).
const BY_BOUND_SPREAD: usize = 1 << 20;

/// The least share of the lead's documents the other clause is expected
/// to hold (its density) for a conjunction to be led in the order of its
/// block bounds: a lead block then holds a match every 8 documents or
/// more, so its bound says something of its matches and the queue fills
/// from the first blocks. A sparser other clause, and blocks come out
/// of the heap whose few matches (if any) score low, each moving the
/// other clause by a search and meeting its blocks out of cache: two
/// terms of 1-6 % took 9 % more instructions a query at 200,000
/// documents with no such limit, and at 10M (expected to match 1,000 to
/// 36,000 documents, enough for a limit on matches alone to let them
/// in) 1.03 ms a query in document order against 1.57 in bound order.
const BY_BOUND_DENSITY: f64 = 0.125;

/// The most clauses a sparse union window scores part by part
/// ([`Exec::score_parts`]), and a dense one by its shared documents
/// ([`Exec::score_few`]): each clause is intersected with every one
/// before it, six intersections at four (two and three measured: rare-2
/// and rare-3 OR; mid-df-2 and mid-df-3 OR).
const PART_CLAUSES: usize = 4;

/// A wide union window's clauses each hold fewer than one document in
/// this many ([`Exec::score_wide`]): denser ones fill a window of their
/// own blocks with postings enough, and under a total that may be a
/// lower bound their next windows are often MaxScore's (seq-2 OR
/// lower-bound: 455.2M instructions over its 300 queries with block
/// windows, 943.1M with wide ones).
const WIDE_DENSITY: u64 = 8;

/// The most documents a wide union window spans ([`Exec::score_wide`]).
/// Measured (`__count` instructions over the class's 300 queries, one
/// segment; 16384 / 32768 / 65536): mid-df-3 OR exact 153.4M / 149.7M /
/// 148.9M, mid-df-2 72.5M / 69.5M / 68.3M, in times within a run's
/// noise from 32768 on (8192: 161.2M, slower). Wider windows bound
/// looser; the gathered postings grow with them.
const WIDE_SPAN: u32 = 32768;

/// The fewest blocks a union's rarest clause has for its impacts to give
/// the sink a floor before the union starts ([`Exec::known_scores`]):
/// with all of them read (rare-2 and rare-3 OR, at most 5 blocks a
/// clause at 200,000 documents), 1 % more instructions a query.
const UNION_KNOWN_BLOCKS: usize = 8;

/// The most blocks a union's rarest clause has for every one of its
/// documents' scores to floor the sink before the union starts, when
/// another clause has [`UNION_KNOWN_BLOCKS`] or more: up to where its
/// impacts do instead.
const UNION_WHOLE_BLOCKS: usize = UNION_KNOWN_BLOCKS - 1;

/// The most clauses whose candidates [`Exec::probe`] scores clause by
/// clause (more are scored whole).
const PROBE_CLAUSES: usize = 8;

/// Whether a candidate whose sum of `known` clauses' scores and the
/// others' bounds beat the floor gains from [`Exec::probe`] (once per
/// window, [`Exec::offer_probed`]): when more than one of the `should`
/// clauses is left to probe (with one, probing it is scoring; mid-df-2
/// OR lower-bound cost 5 % more instructions probed).
fn probe_pays(should: &[usize], known: u64) -> bool {
    should
        .iter()
        .filter(|&&i| i < 64 && known & (1 << i) == 0)
        .count()
        > 1
}

/// Expected matches of a lead window in the next clause from which the
/// lead is thinned by score before the intersection
/// ([`Exec::prefilter_pays`]); chosen by measurement (4 to 24 alike on
/// the synthetic corpus's AND classes).
const PREFILTER_MATCHES: u64 = 8;

/// The fewest matches a conjunction's window offers for each of them to
/// be checked against the floor by the lead's limit ([`Exec::competes`])
/// before it is scored; fewer, and each is scored whole and offered: the
/// limit, computed once per window and floor (a search over f32 values
/// for the window's clause bounds), costs more than scoring the few it
/// would turn away. Instructions a query (synthetic 200,000, one
/// segment, lower-bound), every window checked against from 64 matches:
/// mid-df-2 AND 264.3k -> 243.6k, rare-common-2 AND 96.4k -> 91.4k,
/// seq-2 AND 397.8k -> 390.1k; 1M: mid-df-2 AND 1.057M -> 988k. 32
/// and 128 did about as well; every window checked was the worst.
const CHECK_MATCHES: usize = 64;

/// Intersected candidates checked one by one after which, when half of
/// them or more could not beat the floor, the lead is thinned first
/// whatever the next clause's density ([`Exec::prefilter_pays`]): the
/// floor then sits high against the bounds, as it does in longer lists.
/// mid-df-2 AND lower-bound at 1M: 110.7M to 104.6M instructions over
/// 100 queries, 0.21-0.28 to 0.20-0.21 s over 1,800; at 200,000
/// documents and on the large vocabulary unchanged (within 0.1 %).
/// Thinning from 2 expected matches instead (no rejection count) took
/// 5 % more time at 200,000 documents.
const PREFILTER_SEEN: u64 = 64;

/// How many candidates ahead of the one probed a union asks for the
/// presence bits its probes read first ([`Exec::prefetched`]): 2, 4 and
/// 8 measured alike.
const PREFETCH_AHEAD: usize = 4;

/// The window loop's buffers, kept from one segment to the next.
#[derive(Default)]
pub struct Buffers {
    /// The window's matches, then (after the sink's filter) its candidates.
    matches: Vec<u32>,
    /// Scratch lists for the kernels.
    all: Vec<u32>,
    hits: Vec<u32>,
    tmp: Vec<u32>,
    /// Per clause, where its part of a union window ends in its block.
    ends: Vec<usize>,
    /// Per clause, its bound over the current window (0 for clauses that
    /// do not score).
    bounds: Vec<f32>,
    /// A dense union window's candidates (a bit per document from its
    /// base) and their scores summed so far (0 outside a window).
    cand: Vec<u64>,
    acc: Vec<f32>,
    /// A byte per document of a dense union window, set by each posting,
    /// to count them ([`Exec::count_parts`]; 0 outside a window).
    seen: Vec<u8>,
    /// A sparse window's candidates' scores (or best scores), by rank,
    /// a scratch copy for the merge, and a clause's scores there.
    sums: Vec<f32>,
    tmp_sums: Vec<f32>,
    scores: Vec<f32>,
    /// Per clause, its whole-list bound (0 at the lead and for clauses
    /// that do not score), for the lead's coarse limits.
    list_bounds: Vec<f32>,
    /// Per clause, the key at or under which a union window's document
    /// only it holds cannot compete ([`Exec::lone_key`]), and the floor
    /// (bits) it was found for when it depends on nothing else.
    lone_keys: Vec<f32>,
    lone_for: Vec<Option<u32>>,
    /// Scratch bounds for [`Exec::lone_key`].
    tmp_bounds: Vec<f32>,
    /// A dense union window's documents' sets of decoded clauses (a byte
    /// per document from its base; 0 outside a window).
    masks: Vec<u8>,
    /// Per clause of a wide union window ([`Exec::score_wide`]), its
    /// documents and frequencies there.
    wide: Vec<(Vec<u32>, Vec<u32>)>,
    /// The lead's second-level runs and blocks waiting by bound
    /// ([`Exec::lead_by_bound`]).
    by_bound: std::collections::BinaryHeap<u64>,
    /// Term cursors' block buffers, given back when a segment's search
    /// ends ([`TermScorer::deferred`]).
    #[expect(clippy::vec_box, reason = "each box moves into a cursor and back")]
    blocks: Vec<Box<BlockBuf>>,
    /// The clauses' roles ([`Roles::fill`]).
    roles: Roles,
}

/// The most block buffers [`Buffers`] keeps.
const KEPT_BLOCKS: usize = 64;

impl Buffers {
    /// Empty buffers; they grow on first use and are reused after.
    pub fn new() -> Buffers {
        Buffers::default()
    }

    /// Grows the union windows' bitset, sets and sums to their full size
    /// on first use (all zero, as they are left between windows).
    fn union_scratch(&mut self) {
        if self.masks.len() < MASK_SPAN {
            self.cand = vec![0; UNION_WORDS];
            self.seen = vec![0; MASK_SPAN];
            self.acc = vec![0.0; MASK_SPAN];
            self.masks = vec![0; MASK_SPAN];
        }
    }
}

/// The flat shapes this path runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A single term (or nothing).
    Term,
    /// A boolean of terms with a required (must or filter) clause.
    Conjunction,
    /// A boolean of terms without one.
    Disjunction,
}

/// The shape of `node`, when this path runs it: a term, or a boolean of
/// terms.
pub fn shape(node: &Node) -> Option<Shape> {
    match node {
        Node::Bool(clauses) if clauses.iter().all(|(_, n)| matches!(n, Node::Term(_))) => Some(
            if clauses
                .iter()
                .any(|(o, _)| matches!(o, Occur::Must | Occur::Filter))
            {
                Shape::Conjunction
            } else {
                Shape::Disjunction
            },
        ),
        Node::Bool(_) => None,
        // A phrase runs its own loop over the conjunction of its terms.
        Node::Phrase(_) => Some(Shape::Conjunction),
        Node::Empty | Node::Term(_) => Some(Shape::Term),
        Node::All(_) | Node::Range(_) | Node::Terms(_) => None,
    }
}

/// Runs `node` (a shape [`shape`] accepts) over `seg` into `sink`, with
/// `buf` as scratch space.
pub fn run<S: Sink>(node: &Node, seg: &LiveSegment, sink: &mut S, buf: &mut Buffers) -> Result<()> {
    // A lone term needs no list of clauses built for it.
    let (mut lone, mut many);
    let flat: &mut dyn Iterator<Item = (Occur, &TermNode)> = match node {
        Node::Empty => return Ok(()),
        Node::Phrase(p) => {
            let Some(terms) = PhraseTerms::open(p, seg)? else {
                return Ok(());
            };
            // The rarest term leads and bounds the phrase alone (a phrase
            // scores at most what its frequency, at most each term's, would
            // score with the phrase's weight); the others filter.
            let lead = terms.rarest();
            let occurs = (0..terms.cursors.len())
                .map(|i| {
                    if i == lead {
                        Occur::Must
                    } else {
                        Occur::Filter
                    }
                })
                .collect();
            return exec(seg, terms.cursors, occurs, Some(terms.positions), sink, buf);
        }
        Node::Term(t) => {
            lone = std::iter::once((Occur::Must, t));
            &mut lone
        }
        Node::Bool(clauses) => {
            many = clauses.iter().map(|(o, n)| match n {
                Node::Term(t) => (*o, t),
                _ => unreachable!("window::run on a shape it does not handle"),
            });
            &mut many
        }
        other => return daat::run(other, seg, sink),
    };
    let blocks = &mut buf.blocks;
    let cursor = |t| {
        daat::term_cursor(t, seg, |p, w, n| {
            TermScorer::deferred(p, w, n, blocks.pop().unwrap_or_default())
        })
    };
    let Some((cursors, occurs)) = daat::present_clauses(flat, cursor)? else {
        return Ok(());
    };
    exec(seg, cursors, occurs, None, sink, buf)
}

/// Runs the clauses `cursors` (their `occurs`) over `seg` into `sink`;
/// with `phrase`, the required clauses are a phrase's terms and a document
/// holding them all matches only if it holds the phrase.
fn exec<'a, S: Sink>(
    seg: &'a LiveSegment,
    cursors: Vec<TermScorer<'a>>,
    occurs: Vec<Occur>,
    phrase: Option<PhrasePositions<'a>>,
    sink: &mut S,
    buf: &mut Buffers,
) -> Result<()> {
    let mut roles = std::mem::take(&mut buf.roles);
    roles.fill(&occurs, |i| cursors[i].cost());
    let must_not = std::mem::take(&mut roles.must_not);
    let (required, should) = (&roles.required[..], &roles.should[..]);
    buf.bounds.clear();
    buf.bounds.resize(cursors.len(), 0.0);
    // Limits kept by floor are for this segment's clauses.
    buf.lone_for.clear();
    let mut ex = Exec {
        seg,
        cursors,
        occurs,
        must_not,
        phrase,
        b: buf,
        lead: None,
        window: 0,
        span: (0, 0),
        bounds_of: None,
        bounds_over: None,
        min_norm: 0,
        prune: LeadPrune::default(),
        coarse: None,
        thinned: None,
        scoring: 0,
        checked: (0, 0),
        scores_alone: false,
        joint: None,
    };
    for (i, o) in ex.occurs.iter().enumerate().take(64) {
        ex.scoring |= u64::from(matches!(o, Occur::Must | Occur::Should)) << i;
    }
    // A total that must be exact, told by presence bitmaps up front: the
    // loop then skips what cannot enter the results, counting nothing.
    let lists = |of: &[usize]| -> Vec<_> { of.iter().map(|&i| ex.cursors[i].postings()).collect() };
    let counted = if sink.counts_all() && ex.phrase.is_none() {
        let deletes = seg.deletes.as_deref().map(Vec::as_slice);
        let (required, should, must_not) = (lists(required), lists(should), lists(&ex.must_not));
        totals::live_matches(&required, &should, &must_not, deletes)
    } else {
        None
    };
    match counted {
        Some(total) => {
            sink.count(usize::try_from(total).unwrap_or(usize::MAX));
            ex.drive(required, should, &mut Counted(sink));
        }
        None => ex.drive(required, should, sink),
    }
    roles.must_not = std::mem::take(&mut ex.must_not);
    let error = ex.phrase.as_ref().and_then(|p| p.error());
    let error = error.or_else(|| ex.cursors.iter().find_map(|c| c.error()));
    for c in ex.cursors.drain(..) {
        if ex.b.blocks.len() < KEPT_BLOCKS {
            ex.b.blocks.push(c.into_buf());
        }
    }
    ex.b.roles = roles;
    match error {
        Some(e) => Err(seg.reader.bad(e)),
        None => Ok(()),
    }
}

/// One segment's clauses, positioned, and the window buffers.
struct Exec<'a, 'b> {
    seg: &'a LiveSegment,
    cursors: Vec<TermScorer<'a>>,
    occurs: Vec<Occur>,
    must_not: Vec<usize>,
    /// A phrase's positions, when the required clauses are its terms: a
    /// document they all hold is a match once its phrase frequency is
    /// above 0, and scores by it.
    phrase: Option<PhrasePositions<'a>>,
    b: &'b mut Buffers,
    /// The clause whose block cuts the windows (a conjunction's cheapest
    /// required clause, or a lone clause), whose score the per-candidate
    /// check takes exactly.
    lead: Option<usize>,
    /// Windows begun; the key of what is computed once per window.
    window: u64,
    /// The current window's first and last candidate.
    span: (u32, u32),
    /// The window whose clause bounds `b.bounds` holds.
    bounds_of: Option<u64>,
    /// The lead block's range whose clause bounds `b.bounds` holds, when
    /// it was bounded before its window began: they bound each of its
    /// windows too (a subrange).
    bounds_over: Option<(u32, u32)>,
    /// The least norm byte of the lead's block, with the bounds.
    min_norm: u8,
    prune: LeadPrune,
    /// The clause and the floor (bits) [`Self::coarse_limits`] were
    /// computed for, and they.
    coarse: Option<(usize, u32, (f32, f32))>,
    /// The floor (bits) the current window's lead documents were thinned
    /// under by [`Self::prefilter_lead`], if they were: under the same
    /// floor, each of them competes.
    thinned: Option<u32>,
    /// The clauses that score (must and should), a bit each among the
    /// first 64.
    scoring: u64,
    /// Intersected candidates checked against the floor one by one (by
    /// the lead's limit, or by their score when a window has few), and
    /// how many of them could not beat it ([`Self::prefilter_pays`]).
    checked: (u64, u64),
    /// Whether the lead is the only clause that scores (a lone term,
    /// maybe with filters or exclusions), outside a phrase: a
    /// candidate's score is then its lead score, which the sink compares
    /// with its floor for less than [`Self::competes`] costs while the
    /// floor rises (a limit computed for each new floor; a single rare
    /// term: 57.6k instructions a query checked, 50.2k offered
    /// straight). A phrase's candidates are checked, so that positions
    /// are read only for those that may compete.
    scores_alone: bool,
    /// The clause whose blocks bound the lead's together with it
    /// ([`Self::joint_rejects`]), if any: a conjunction's next cheapest
    /// clause, when both are of one field and it has impacts.
    joint: Option<usize>,
}

impl Exec<'_, '_> {
    /// Feeds the clauses' matches to `sink`: a conjunction led by its
    /// cheapest required clause, a lone optional clause, or a union.
    fn drive<S: Sink>(&mut self, required: &[usize], should: &[usize], sink: &mut S) {
        self.known_scores(required, should, sink);
        match (required.split_first(), should) {
            (Some((&lead, rest)), _) => self.lead(lead, rest, sink),
            (None, &[lead]) => self.lead(lead, &[], sink),
            (None, _) => self.union(should, sink),
        }
    }

    /// The score of `doc`, every clause positioned at or before it: the f32
    /// sum of the matching scoring clauses in clause order, as
    /// `BoolScorer::score` sums it (whose required clauses already sit on
    /// the document), each clause found by [`TermScorer::score_of`].
    /// Always inlined, as [`Scorer::seek`] is.
    #[inline(always)]
    fn score(cursors: &mut [TermScorer], occurs: &[Occur], doc: u32) -> f32 {
        let mut score = 0.0f32;
        for (c, o) in cursors.iter_mut().zip(occurs) {
            if matches!(o, Occur::Must | Occur::Should)
                && let Some(s) = c.score_of(doc)
            {
                score += s;
            }
        }
        score
    }

    /// Tells a sink ranked by score what a lone term's impacts say some
    /// of its documents score at least ([`TermScorer::known_scores`]),
    /// when every document of it is a live match (no exclusions, no
    /// deletions), so that blocks can be passed from the first one on.
    /// A union's documents score at least what any one of its clauses
    /// scores them (the others add scores of 0 or more, and an f32 sum
    /// never falls as a term is added), so its rarest clause, whose
    /// scores are the highest, tells the same of the union when its list
    /// is long enough to have impacts worth reading
    /// ([`UNION_KNOWN_BLOCKS`]): mid-df-2 OR lower-bound -2.6 %
    /// instructions, seq-2 OR -6 %. A shorter rarest clause beside a long
    /// one gives every document's exact score, its few blocks decoded
    /// ([`UNION_WHOLE_BLOCKS`]): the union's k-th score is then known
    /// about as soon as the rare term's, the long clauses' bounds fall
    /// under it from the first window, and MaxScore probes them instead
    /// of scoring their postings (rare-common-2 / -3 / -5 OR lower-bound,
    /// synthetic 200k: -35 / -33 / -16 %; large vocabulary: -76 / -78 /
    /// -44 %). Two short clauses (rare-2, rare-3) are merged whole as
    /// fast as any floor would let them be: neither path.
    fn known_scores<S: Sink>(&mut self, required: &[usize], should: &[usize], sink: &mut S) {
        if !sink.ranks_by_score()
            || !self.must_not.is_empty()
            || self.seg.deletes.is_some()
            || self.phrase.is_some()
        {
            return;
        }
        let blocks = |s: &Self, i: usize| s.cursors[i].postings().num_blocks();
        let (lone, whole) = match (required, should) {
            ([one], []) if self.occurs[*one] == Occur::Must => (*one, false),
            ([], [one]) => (*one, false),
            ([], many) => match many.iter().min_by_key(|&&i| self.cursors[i].cost()) {
                Some(&rarest) if blocks(self, rarest) >= UNION_KNOWN_BLOCKS => (rarest, false),
                // A short rarest clause beside a long one: its every
                // document's score, decoded whole.
                Some(&rarest)
                    if blocks(self, rarest) <= UNION_WHOLE_BLOCKS
                        && many.iter().any(|&i| blocks(self, i) >= UNION_KNOWN_BLOCKS) =>
                {
                    (rarest, true)
                }
                _ => return,
            },
            _ => return,
        };
        // Keys, not scores: the sink scores the one it keeps.
        let mut keys = std::mem::take(&mut self.b.sums);
        keys.clear();
        if whole {
            self.cursors[lone].list_keys(&mut keys);
        } else {
            self.cursors[lone].known_keys(&mut keys);
        }
        let weight = self.cursors[lone].weight();
        sink.known_scores(&mut keys, |key| weight.score_of_key(key));
        self.b.sums = keys;
    }

    /// Hands the window's `matches` to the sink: excluded documents
    /// removed, live ones counted, and, with `offer`, those that may
    /// compete offered. The scoring clauses must not have moved past the
    /// first match.
    fn finish<S: Sink>(&mut self, sink: &mut S, offer: bool) {
        if self.b.matches.is_empty() {
            // Most stretches of a selective conjunction.
            return;
        }
        self.drop_excluded();
        if self.phrase.is_some() {
            self.filter_unconfirmed(sink);
            for i in 0..self.b.matches.len() {
                let doc = self.b.matches[i];
                if !self.seg.is_deleted(doc) {
                    self.take_phrase(doc, sink, offer);
                }
            }
            return;
        }
        sink.count(self.live_matches());
        if !offer {
            return;
        }
        sink.filter(&mut self.b.matches);
        self.offer_live(sink, false, None);
    }

    /// Takes `doc`, a live document holding every term of the phrase (each
    /// cursor at or before it): when the total may be a lower bound, a
    /// document whose lead score cannot beat the floor is dropped before
    /// its positions are read (the lead's bound and score bound the
    /// phrase's: its frequency is at most the lead's, scored with the same
    /// weight; the least of the terms' bounds was measured to cost more
    /// than it saves); otherwise it is a match if its phrase
    /// frequency is above 0, counted, and (with `offer`) offered, scored
    /// with that frequency (which the sink compares with its floor: that
    /// costs less than the lead's check).
    fn take_phrase<S: Sink>(&mut self, doc: u32, sink: &mut S, offer: bool) {
        let floor = sink.floor();
        if let Some(f) = floor.filter(|_| sink.prefilter())
            && !self.competes(doc, f)
        {
            sink.dropped(1);
            return;
        }
        let Some(p) = self.phrase.as_mut() else {
            return;
        };
        let freq = p.freq(&mut self.cursors, doc);
        if freq == 0 {
            return;
        }
        sink.count(1);
        if !offer {
            return;
        }
        let cursors = &self.cursors;
        sink.offer(doc, || phrase::score(cursors, freq, doc));
    }

    /// When the total may be a lower bound, thins `matches`, not all yet
    /// known to match, by the sink's filter, reporting what it drops.
    fn filter_unconfirmed<S: Sink>(&mut self, sink: &mut S) {
        if sink.prefilter() {
            let n = self.b.matches.len();
            sink.filter(&mut self.b.matches);
            sink.dropped(n - self.b.matches.len());
        }
    }

    /// Removes from `matches` the documents a must-not clause holds.
    fn drop_excluded(&mut self) {
        if !self.must_not.is_empty() {
            let (cursors, must_not) = (&mut self.cursors, &self.must_not);
            self.b
                .matches
                .retain(|&d| must_not.iter().all(|&i| cursors[i].seek(d) != d));
        }
    }

    /// How many of `matches` are live.
    fn live_matches(&self) -> usize {
        self.live_in(&self.b.matches)
    }

    /// How many of `docs` are live.
    fn live_in(&self, docs: &[u32]) -> usize {
        match self.seg.deletes {
            None => docs.len(),
            Some(_) => docs.iter().filter(|&&d| !self.seg.is_deleted(d)).count(),
        }
    }

    /// Sets `ends[i]`, for each clause `i` of `clauses`, to where its part
    /// of a window ending before `end` ends in its current block; returns
    /// how many postings those parts hold.
    fn window_ends(
        &self,
        clauses: impl Iterator<Item = usize>,
        end: u32,
        ends: &mut Vec<usize>,
    ) -> usize {
        ends.clear();
        ends.resize(self.cursors.len(), 0);
        clauses
            .map(|i| {
                let c = &self.cursors[i];
                let n = count_below(c.block_rest(), end);
                ends[i] = c.pos() + n;
                n
            })
            .sum()
    }

    /// The best score a match in `lo..=hi` can have: the f32 sum, in
    /// clause order as [`Self::score`] sums, of each scoring clause's
    /// bound over the range (monotone rounding keeps the sum of bounds
    /// above every sum of scores). The bounds stay in `b.bounds` for the
    /// per-candidate check.
    fn bound_within(&mut self, lo: u32, hi: u32) -> f32 {
        self.bounds_of = None;
        self.bounds_over = None;
        let mut sum = 0.0f32;
        for (i, (c, o)) in self.cursors.iter_mut().zip(&self.occurs).enumerate() {
            let bound = if matches!(o, Occur::Must | Occur::Should) {
                c.bound_until(lo, hi)
            } else {
                0.0
            };
            self.b.bounds[i] = bound;
            sum += bound;
        }
        sum
    }

    /// Whether block `b` of the `lead`, over `lo..=hi`, cannot beat
    /// `floor`: by the sum of every clause's bound over the range
    /// ([`Self::bound_within`], left in `b.bounds`), or, when that sum is
    /// within [`JOINT_WITHIN`] of the floor, by the joint bound of the
    /// lead's block and the [`Self::joint`] clause's blocks over it. The
    /// one check of a lead block, in document order and in bound order
    /// (document order, lower-bound, 1M documents: seq-3 AND -3.7 %
    /// instructions, seq-5 -2.2 %; "cex qui drim", three terms nearly
    /// every document holds: lead windows decoded 5,064 -> 3,223, -9.5 %).
    fn block_rejected(
        &mut self,
        (lead, b): (usize, usize),
        (lo, hi): (u32, u32),
        floor: f32,
    ) -> bool {
        let sum = self.bound_within(lo, hi);
        sum <= floor
            || self.joint.is_some_and(|o| {
                sum <= floor * JOINT_WITHIN && self.joint_rejects((lead, b), o, (lo, hi), floor)
            })
    }

    /// Whether block `b` of the `lead` (over `lo..=hi`) cannot beat
    /// `floor` beside the blocks of `other` over that range by their joint
    /// bound ([`kernels::joint_bound`]), the other clauses at their
    /// bounds of [`Self::bound_within`] (which `b.bounds` holds): a
    /// document's norm is one in both clauses, so their best scores are
    /// taken at each norm, not each at its own. Sums of two common terms'
    /// block bounds rarely fall under the floor, as each block holds some
    /// long document of a large frequency and some short one; their joint
    /// bounds do (seq-2 AND, "zax jux": 204 of 575 lead blocks that the
    /// sum let through, each otherwise decoded and thinned). `other` is of
    /// the lead's field and has impacts (the caller sees to it, once a
    /// search). False when it does not apply: no impacts to read, a bound
    /// not finite (damaged impacts).
    fn joint_rejects(
        &mut self,
        (lead, b): (usize, usize),
        other: usize,
        (lo, hi): (u32, u32),
        floor: f32,
    ) -> bool {
        if !self.b.bounds.iter().all(|b| b.is_finite()) {
            return false;
        }
        let (wl, wo) = (
            self.cursors[lead].weight().weight,
            self.cursors[other].weight().weight,
        );
        let Some(x) = self.cursors[lead].block_frontier(b) else {
            return false;
        };
        let blocks = self.cursors[other].blocks_over(lo, hi);
        if blocks.is_empty() {
            return false;
        }
        for j in blocks {
            let Some(y) = self.cursors[other].block_frontier(j) else {
                return false;
            };
            let joint = kernels::joint_bound((&x, wl), (&y, wo), &self.b.bounds, (lead, other));
            if joint > floor {
                return false;
            }
        }
        true
    }

    /// The current window's clause bounds (in `b.bounds`) and the lead
    /// block's least norm, computed once per window, or kept from the
    /// bounds of the lead block that holds it when those were computed to
    /// decide whether to decode the block (bounds over a wider range are
    /// still bounds, and over the same blocks of the other clauses, the
    /// same ones: seq-2 AND lower-bound 935k instructions a query before,
    /// with the block pass keeping its stopping key, 894k after).
    #[inline]
    fn window_bounds(&mut self, lead: usize) {
        if self.bounds_of != Some(self.window) {
            let (lo, hi) = self.span;
            if !self.bounds_over.is_some_and(|(a, z)| a <= lo && hi <= z) {
                self.bound_within(lo, hi);
            }
            self.min_norm = self.cursors[lead].block_min_norm();
            self.bounds_of = Some(self.window);
        }
    }

    /// The key limit of the lead's score under `floor` in the current
    /// window ([`crate::query::prune`]): `NEG_INFINITY` when nothing can
    /// be rejected.
    #[inline]
    fn lead_key_limit(&mut self, lead: usize, floor: f32) -> f32 {
        self.window_bounds(lead);
        let w = self.cursors[lead].weight();
        self.prune
            .key_limit(floor, self.window, lead, &self.b.bounds, w)
    }

    /// [`Self::lead_key_limit`] and the frequency threshold at the lead
    /// block's least norm, for the lead's documents thinned in bulk.
    #[inline]
    fn lead_limits(&mut self, lead: usize, floor: f32) -> (f32, u32) {
        let key_limit = self.lead_key_limit(lead, floor);
        let w = self.cursors[lead].weight();
        (key_limit, self.prune.min_tf(key_limit, self.min_norm, w))
    }

    /// Whether `doc`, a match of the current window, may beat `floor`:
    /// false when its lead's exact score plus the other clauses' window
    /// bounds (summed in clause order) cannot. True without a lead, and
    /// for a match of a window thinned under the same floor.
    #[inline]
    fn competes(&mut self, doc: u32, floor: f32) -> bool {
        let Some(lead) = self.lead else {
            return true;
        };
        if self.thinned == Some(floor.to_bits()) || self.scores_alone {
            return true;
        }
        // Checked directly rather than by a limit found for this floor:
        // a floor that rose since the window was thinned (or while it
        // fills the sink, with every offer) would need a new limit, a
        // search of about 550 instructions, for a few matches each.
        self.window_bounds(lead);
        let c = &mut self.cursors[lead];
        c.seek(doc);
        let tf = c.tf();
        let score = c.weight().score(tf, c.norm(doc));
        prune::sum_with(&self.b.bounds, lead, score) > floor
    }

    /// Fills `matches` with those of the lead's next `n` documents that
    /// may beat `floor` by their lead score ([`Self::competes`], in bulk,
    /// before any other clause sees them). Returns how many it dropped.
    fn prefilter_lead(&mut self, lead: usize, n: usize, floor: f32) -> usize {
        let (limit, min_tf) = self.lead_limits(lead, floor);
        let c = &mut self.cursors[lead];
        let w = c.weight();
        self.b.matches.clear();
        if limit == f32::NEG_INFINITY {
            self.b.matches.extend_from_slice(&c.block_rest()[..n]);
            return 0;
        }
        self.thinned = Some(floor.to_bits());
        let (docs, tfs, norms) = c.rest_with_tfs();
        let part = (&docs[..n], &tfs[..n], norms);
        keys_above(part, w, (limit, min_tf), &mut self.b.matches);
        n - self.b.matches.len()
    }

    /// The optional clauses (a bit per clause index) whose documents in
    /// `lo..=hi` may score above `floor` (MaxScore): the others are the
    /// largest set, taken by ascending bound, whose bounds summed in
    /// clause order in f32 stay at or under the floor, so a document
    /// matching only them cannot beat it (scores are non-negative, and
    /// adding one never lowers an f32 sum). Each clause's bound stays in
    /// `b.bounds`. All of them (every bit) without a floor, or with more
    /// clauses than the mask holds.
    fn essential(&mut self, should: &[usize], lo: u32, hi: u32, floor: Option<f32>) -> u64 {
        let Some(floor) = floor.filter(|_| self.cursors.len() <= 64) else {
            return u64::MAX;
        };
        self.bounds_over = None;
        let bound = &mut self.b.bounds;
        // On the stack: this runs once per window.
        let mut order = [0u8; 64];
        for (k, &i) in should.iter().enumerate() {
            bound[i] = self.cursors[i].bound_until(lo, hi);
            order[k] = i as u8;
        }
        let order = &mut order[..should.len()];
        order.sort_unstable_by(|&a, &b| bound[usize::from(a)].total_cmp(&bound[usize::from(b)]));
        let mut rest = 0u64;
        for &i in order.iter() {
            let with = rest | 1 << i;
            let sum = (0..self.cursors.len())
                .filter(|&j| with & (1 << j) != 0)
                .fold(0.0f32, |s, j| s + bound[j]);
            if sum > floor {
                break;
            }
            rest = with;
        }
        !rest
    }

    /// Offers the live documents of `matches` (counting each first when
    /// `count` says so) that may beat the sink's floor: by the lead's
    /// limits ([`Self::competes`]) when there are [`CHECK_MATCHES`] or
    /// more (fewer are scored whole, the sink comparing each score with
    /// its floor), or for a union's candidates (from its `essential`
    /// clauses, the window's bounds in `b.bounds`), probed clause by
    /// clause while they may ([`Self::probe`]).
    fn offer_live<S: Sink>(&mut self, sink: &mut S, count: bool, essential: Option<u64>) {
        let deletes = self.seg.deletes.is_some();
        let few = self.b.matches.len() < CHECK_MATCHES;
        // A conjunction of three scoring clauses or more: its candidates
        // are probed from the lead, the clause of the largest window
        // bound next, and dropped as soon as their known scores and the
        // other bounds cannot beat the floor, rather than scored whole.
        let probed = self
            .lead
            .filter(|_| essential.is_none() && self.probes_candidates());
        for i in 0..self.b.matches.len() {
            let doc = self.b.matches[i];
            if deletes && self.seg.is_deleted(doc) {
                continue;
            }
            if count {
                sink.count(1);
            }
            if let Some(essential) = essential {
                // No sum was checked against the floor: probe.
                self.offer_probed(sink, doc, (essential, true));
                continue;
            }
            if let Some(floor) = sink.floor() {
                self.checked.0 += 1;
                if let Some(lead) = probed {
                    // The window's bounds, should the floor have come
                    // with this window's offers.
                    self.window_bounds(lead);
                    match self.probe(doc, 1 << lead, Some(floor)) {
                        Some(score) => sink.offer(doc, || score),
                        None => self.checked.1 += 1,
                    }
                    continue;
                }
                if few {
                    // Counted as turned away when it scores at most the
                    // floor: the limit turns away no more than that (it
                    // takes the other clauses' bounds for their scores).
                    let score = Self::score(&mut self.cursors, &self.occurs, doc);
                    self.checked.1 += u64::from(score <= floor);
                    sink.offer(doc, || score);
                    continue;
                }
                if !self.competes(doc, floor) {
                    self.checked.1 += 1;
                    continue;
                }
            }
            let (cursors, occurs) = (&mut self.cursors, &self.occurs);
            sink.offer(doc, || Self::score(cursors, occurs, doc));
        }
    }

    /// Whether a conjunction's candidates are probed clause by clause
    /// ([`Self::probe`]) rather than checked by the lead's score and
    /// scored whole: with three scoring clauses or more (with two, the
    /// lead's check is the probe), each probe read by rank out of its
    /// clause's block, most candidates are dropped after one or two of
    /// them (seq-5 AND lower-bound, a query of five common terms: 4 of
    /// 5 clauses scored a candidate before).
    fn probes_candidates(&self) -> bool {
        self.phrase.is_none()
            && self.cursors.len() <= PROBE_CLAUSES
            && self.scoring.count_ones() >= 3
    }

    /// Offers `doc`, a union window's candidate whose `known` clauses'
    /// scores may be read by a seek: probed clause by clause under the
    /// sink's floor ([`Self::probe`]) when `probes`, else scored whole
    /// (the caller found its sum of scores and bounds above the floor,
    /// and one clause is left).
    #[inline(always)]
    fn offer_probed<S: Sink>(&mut self, sink: &mut S, doc: u32, (known, probes): (u64, bool)) {
        if !probes {
            let (cursors, occurs) = (&mut self.cursors, &self.occurs);
            sink.offer(doc, || Self::score(cursors, occurs, doc));
        } else if let Some(score) = self.probe(doc, known, sink.floor()) {
            sink.offer(doc, || score);
        }
    }

    /// The score of `doc`, a union window's candidate (every clause at
    /// or before it), unless it cannot beat `floor`: the `known` clauses
    /// (decoded: a seek in their block) are scored first and the others
    /// stand for their window bounds (`b.bounds`), or for 0 when their
    /// presence bitmap lacks the document; while the clause-order
    /// sum of those scores and bounds beats the floor, the unknown clause
    /// of the largest bound is probed (seek and score) in its place. The
    /// sum never falls below the score (a bound is at least the score it
    /// stands for, and f32 sums are monotone), and once every clause is
    /// known it has the bits of [`Self::score`] (a clause without the
    /// document adds +0.0). `None` as soon as the sum is at most the
    /// floor: most candidates are dropped with few clauses probed.
    fn probe(&mut self, doc: u32, known: u64, floor: Option<f32>) -> Option<f32> {
        let n = self.cursors.len();
        if n > PROBE_CLAUSES {
            // Scored whole (the sink compares).
            return Some(Self::score(&mut self.cursors, &self.occurs, doc));
        }
        // On the stack: this runs once per candidate.
        let mut parts = [0.0f32; PROBE_CLAUSES];
        for i in bits(self.scoring & known) {
            let c = &mut self.cursors[i];
            if c.seek(doc) == doc {
                parts[i] = c.score();
            }
        }
        let mut unknown = self.scoring & !known;
        for i in bits(unknown) {
            // A clause whose presence bitmap lacks the document scores 0,
            // told by one bit read up front: the bounds summed below are
            // then only those of the clauses that may hold it, and fewer
            // of those are probed (decided without a branch on the bit).
            // A conjunction's candidate is held by its required clauses.
            let lacks = self.occurs[i] == Occur::Should
                && self.cursors[i]
                    .postings()
                    .presence()
                    .is_some_and(|p| !p.contains(doc));
            parts[i] = if lacks { 0.0 } else { self.b.bounds[i] };
            unknown &= !(u64::from(lacks) << i);
        }
        loop {
            let best = parts[..n].iter().fold(0.0f32, |s, &p| s + p);
            if floor.is_some_and(|floor| best <= floor) {
                return None;
            }
            if unknown == 0 {
                return Some(best);
            }
            let bounds = &self.b.bounds;
            let mut j = unknown.trailing_zeros() as usize;
            for k in bits(unknown) {
                if bounds[k] > bounds[j] {
                    j = k;
                }
            }
            unknown &= !(1 << j);
            let c = &mut self.cursors[j];
            parts[j] = c.score_of(doc).unwrap_or(0.0);
        }
    }

    /// Passes, without decoding them, the lead's blocks from its pending
    /// one on (a second-level run at a time where one starts) whose
    /// windows cannot beat the sink's floor, when that needs no decoding:
    /// the total may be a lower bound, or the lead matches `alone` and no
    /// document is deleted, so a block counts by its length. A union's one
    /// essential clause is passed the same way
    /// ([`Self::pass_essential_blocks`]): the bounds it checks cover every
    /// document of a passed range, held by the lead or not.
    fn pass_lead_blocks<S: Sink>(&mut self, lead: usize, alone: bool, sink: &mut S) {
        let countable = alone && self.must_not.is_empty() && self.seg.deletes.is_none();
        while self.cursors[lead].is_pending() {
            let Some(floor) = sink.floor() else { return };
            let prefilter = sink.prefilter();
            if !prefilter && !countable {
                return;
            }
            let c = &self.cursors[lead];
            let (b, nblocks) = (c.block(), c.postings().num_blocks());
            let p = *c.postings();
            let run_end = if b.is_multiple_of(L2_BLOCKS) && b + L2_BLOCKS <= nblocks {
                Some(b + L2_BLOCKS)
            } else {
                None
            };
            let range =
                |s: &Self, end: usize| (s.cursors[lead].block_start(b), p.last_doc(end - 1));
            let mut len = 0;
            // A whole second-level run by its summary, then blocks one by
            // one against the other clauses' list bounds (one key compare
            // each), then the next block against their bounds over it.
            let (coarse, coarse_key) = self.coarse_limits(lead, floor, true);
            if let Some(end) = run_end
                && let (lo, Some(hi)) = range(self, end)
                && (self.cursors[lead].bound_until(lo, hi) <= coarse
                    || self.bound_within(lo, hi) <= floor)
            {
                len = (b..end).map(|i| p.block_len(i)).sum();
                self.cursors[lead].pass_blocks(L2_BLOCKS);
            }
            if len == 0 {
                len = self.cursors[lead].pass_blocks_under(coarse_key);
            }
            if len == 0 {
                let (lo, Some(hi)) = range(self, b + 1) else {
                    return;
                };
                if !self.block_rejected((lead, b), (lo, hi), floor) {
                    self.bounds_over = Some((lo, hi));
                    return;
                }
                len = p.block_len(b);
                self.cursors[lead].pass_blocks(1);
            }
            if prefilter {
                sink.dropped(len);
            } else {
                sink.count(len);
            }
        }
    }

    /// The largest lead score, and the largest lead key (`tf *
    /// inv[norm]`), at which the lead's score plus the other scoring
    /// clauses' whole-list bounds (in clause order) cannot beat `floor`:
    /// the coarse check, a lead range bounded by at most the first (a
    /// block whose best key is at most the second) being passed without
    /// the other clauses' bounds over it. Computed once per clause and
    /// floor (list bounds only fall, to 0 when a list ends, and limits
    /// computed with larger ones pass less). With `reread`, the list
    /// bounds are read anew first (document order); without, they are
    /// those [`Self::list_bounds`] last read (bound order, whose cursors
    /// may be exhausted and then move back).
    fn coarse_limits(&mut self, lead: usize, floor: f32, reread: bool) -> (f32, f32) {
        if let Some((of, bits, limits)) = self.coarse
            && of == lead
            && bits == floor.to_bits()
        {
            return limits;
        }
        if reread {
            self.list_bounds(lead);
        }
        let bounds = &self.b.list_bounds;
        let limit = prune::exclusive_limit(floor, |x| prune::sum_with(bounds, lead, x));
        let limits = (limit, prune::key_limit(limit, self.cursors[lead].weight()));
        self.coarse = Some((lead, floor.to_bits(), limits));
        limits
    }

    /// Sets `b.list_bounds` to each clause's whole-list bound, 0 at
    /// `lead` and for clauses that do not score.
    fn list_bounds(&mut self, lead: usize) {
        let bounds = &mut self.b.list_bounds;
        bounds.clear();
        for (i, (c, o)) in self.cursors.iter_mut().zip(&self.occurs).enumerate() {
            let scoring = matches!(o, Occur::Must | Occur::Should);
            bounds.push(if scoring && i != lead {
                c.list_bound()
            } else {
                0.0
            });
        }
    }

    /// Whether thinning the lead's next `n` documents by their lead score
    /// before the intersection pays: when the next clause is expected to
    /// match at least [`PREFILTER_MATCHES`] of them (its density times
    /// `n`). Fewer, and that clause's block is decoded in almost every
    /// window anyway, so checking the few matches the bulk intersection
    /// leaves costs less than checking every lead document (mid-df-2 AND,
    /// lower-bound: 338k instructions a query thinned first, 284k
    /// intersected first; seq-2 AND needs the thinning: 1.28M, 4.39M
    /// without); or when half the candidates checked after the
    /// intersection so far could not beat the floor ([`PREFILTER_SEEN`]).
    fn prefilter_pays(&self, others: &[usize], n: usize) -> bool {
        let Some(&next) = others.first() else {
            return true;
        };
        let docs = u64::from(self.seg.reader.doc_count().max(1));
        let (seen, failed) = self.checked;
        self.cursors[next].cost() * n as u64 >= PREFILTER_MATCHES * docs
            || (seen >= PREFILTER_SEEN && failed * 2 >= seen)
    }

    /// Candidates from `lead`, confirmed by the `others` (required).
    fn lead<S: Sink>(&mut self, lead: usize, others: &[usize], sink: &mut S) {
        self.lead = Some(lead);
        self.scores_alone =
            self.phrase.is_none() && self.cursors.len() <= 64 && self.scoring == 1 << lead;
        self.joint = others.first().copied().filter(|&o| {
            let (l, c) = (&self.cursors[lead], &self.cursors[o]);
            self.phrase.is_none() && l.shares_norms(c) && c.postings().has_skip_data()
        });
        if self.by_bound_pays(lead, others, sink) {
            return self.lead_by_bound(lead, others, sink);
        }
        // Whether the lead's documents are matches by themselves (a
        // phrase's are candidates until its positions confirm them), and
        // also with nothing to exclude.
        let lone = others.is_empty() && self.phrase.is_none();
        let alone = lone && self.must_not.is_empty();
        loop {
            self.pass_lead_blocks(lead, lone, sink);
            self.cursors[lead].ensure();
            let docs = self.cursors[lead].block_rest();
            let Some(&first) = docs.first() else { break };
            let end = match sink.window(first) {
                Window::Take(end) => end,
                Window::Skip(end) => {
                    self.cursors[lead].seek(end);
                    continue;
                }
            };
            let n = count_below(docs, end);
            self.lead_window(lead, others, alone, n, sink);
        }
    }

    /// Whether a conjunction is better led block by block in the order
    /// of its lead's block bounds ([`Self::lead_by_bound`]) than in
    /// document order: when its sink ranks by score alone and may leave
    /// documents uncounted from the start, the lead is alone or has one
    /// clause besides it, or a few whose postings are small
    /// ([`BY_BOUND_OTHERS`], [`BY_BOUND_SPREAD`]), dense enough
    /// ([`BY_BOUND_DENSITY`]), no optional clause scores beside it, and
    /// the lead has [`BY_BOUND_BLOCKS`] blocks or more.
    fn by_bound_pays<S: Sink>(&self, lead: usize, others: &[usize], sink: &S) -> bool {
        let p = self.cursors[lead].postings();
        let docs = f64::from(self.seg.reader.doc_count().max(1));
        let density = others
            .iter()
            .fold(1.0, |d, &o| d * self.cursors[o].cost() as f64 / docs);
        let spread = || -> usize {
            let bytes = others
                .iter()
                .map(|&o| self.cursors[o].postings().encoded_len());
            bytes.sum()
        };
        let others_fit = match others.len() {
            0 | 1 => true,
            n => n <= BY_BOUND_OTHERS && spread() <= BY_BOUND_SPREAD,
        };
        // Optional clauses beside a required lead are not moved back with
        // it.
        let optional =
            (self.occurs.iter().enumerate()).any(|(i, o)| i != lead && matches!(o, Occur::Should));
        others_fit
            && !optional
            && self.phrase.is_none()
            && sink.ranks_by_score()
            && sink.prefilter()
            && p.has_skip_data()
            && p.num_blocks() >= BY_BOUND_BLOCKS
            && p.num_blocks() < 1 << 24
            && density >= BY_BOUND_DENSITY
    }

    /// The lead's next `n` documents (the rest of its current block, or
    /// up to where the sink's window ends) as one window: bounded, and
    /// when it may beat the floor thinned by the lead's score and
    /// confirmed by the `others`; only counted when it may not and the
    /// total must be exact; dropped when it may be a lower bound. The
    /// lead moves past the window.
    #[inline(always)]
    fn lead_window<S: Sink>(
        &mut self,
        lead: usize,
        others: &[usize],
        alone: bool,
        n: usize,
        sink: &mut S,
    ) {
        let docs = self.cursors[lead].block_rest();
        let (first, hi) = (docs[0], docs[n - 1]);
        self.thinned = None;
        self.window += 1;
        self.span = (first, hi);
        // A window whose best score cannot beat the sink's floor is
        // only counted, or, when the total may be a lower bound, not
        // even intersected.
        let floor = sink.floor();
        let offer = match floor {
            Some(floor) => {
                self.window_bounds(lead);
                self.b.bounds.iter().fold(0.0f32, |s, &b| s + b) > floor
            }
            None => true,
        };
        let next = self.cursors[lead].pos() + n;
        if !offer && sink.prefilter() {
            sink.dropped(n);
        } else if offer && alone && floor.is_none() && self.scores_alone && sink.ranks_by_score() {
            // A lone clause, the only one that scores, before a sink
            // ranked by score has a floor: every document offered,
            // scored from the block's frequencies as they come (a term
            // too short for skip data has no impacts to give a floor
            // first). A sorted sink has none: it filters a window by its
            // sort keys first (below).
            sink.count(self.live_in(&self.cursors[lead].block_rest()[..n]));
            let c = &mut self.cursors[lead];
            let w = c.weight();
            let (docs, tfs, norms) = c.rest_with_tfs();
            for (&doc, &tf) in docs[..n].iter().zip(&tfs[..n]) {
                if !self.seg.is_deleted(doc) {
                    sink.offer(doc, || w.score_doc(tf, doc, norms));
                }
            }
        } else if let Some(floor) = floor.filter(|_| offer && alone) {
            // A lone clause: its window counts whole, and only what
            // may beat the floor by its score is offered.
            sink.count(self.live_in(&self.cursors[lead].block_rest()[..n]));
            self.prefilter_lead(lead, n, floor);
            if self.scores_alone {
                // Scored from the frequency at its place in the window,
                // where the cursor would search for it.
                let (c, kept) = (&mut self.cursors[lead], &self.b.matches);
                let w = c.weight();
                let (docs, tfs, norms) = c.rest_with_tfs();
                let mut at = 0;
                for &doc in kept {
                    at = kernels::find_next_geq(&docs[..n], at, doc);
                    if !self.seg.is_deleted(doc) {
                        sink.offer(doc, || w.score_doc(tfs[at], doc, norms));
                    }
                }
                return self.cursors[lead].move_to(next);
            }
            for i in 0..self.b.matches.len() {
                let doc = self.b.matches[i];
                if !self.seg.is_deleted(doc) {
                    let (cursors, occurs) = (&mut self.cursors, &self.occurs);
                    sink.offer(doc, || Self::score(cursors, occurs, doc));
                }
            }
        } else {
            match floor.filter(|_| offer && sink.prefilter() && self.prefilter_pays(others, n)) {
                // Candidates thinned by their lead score first.
                Some(floor) => {
                    let dropped = self.prefilter_lead(lead, n, floor);
                    sink.dropped(dropped);
                }
                None => {
                    self.b.matches.clear();
                    let c = &self.cursors[lead];
                    self.b.matches.extend_from_slice(&c.block_rest()[..n]);
                }
            }
            if others.is_empty() {
                self.finish(sink, offer);
            } else {
                self.confirm(others, sink, offer);
            }
        }
        // Scoring moved the lead forward inside the window only.
        self.cursors[lead].move_to(next);
    }

    /// A lone term or a conjunction ([`Self::by_bound_pays`]) whose total
    /// may be a lower bound, led block by block in the order of its lead's
    /// block bounds, best first, rather than in document order: the floor rises on the best
    /// blocks first, and the loop stops at the first block whose bound
    /// plus the other clauses' list bounds cannot beat it (the coarse
    /// limit, [`Self::coarse_limits`]), dropping every block left.
    /// In document order the floor rose as blocks came, and half the
    /// blocks a conjunction of two common terms decoded were decoded
    /// only because it had not risen yet.
    ///
    /// Second-level runs and blocks wait in one max-heap by the lead's
    /// best key (which orders them as their bounds do); a run comes out
    /// as those of its blocks that may still beat the floor. A block that
    /// comes out is bounded over its range with every clause (the others
    /// moved back or forth to it, [`TermScorer::rewind_to`]) and, when
    /// that may beat the floor, is one window ([`Self::lead_window`]).
    /// The sink sees its documents out of order, so its floor is taken
    /// one float lower ([`AnyOrder`]): a document tying the k-th score
    /// may still enter by a lower number.
    #[inline(never)]
    fn lead_by_bound<S: Sink>(&mut self, lead: usize, others: &[usize], sink: &mut S) {
        let mut sink = AnyOrder(sink);
        let sink = &mut sink;
        // The other clauses' list bounds, read before any of them moves
        // (a list bound is 0 once its cursor is exhausted, and here a
        // cursor may be exhausted and then move back): the coarse limits
        // are computed over these.
        self.list_bounds(lead);
        self.coarse = None;
        // Keys are positive (or infinite for damaged impacts), so their
        // 31 bits order them; among equal keys the lower first block
        // comes first (a run before its first block), so that ties with
        // the floor are met in document order. A block's least norm rides
        // along, so that its bound is kept without reading its impacts
        // again.
        const FIRST: u64 = (1 << 24) - 1;
        let entry = |(key, least): (f32, u8), run: bool, i: usize| {
            let first = if run { i * L2_BLOCKS } else { i } as u64;
            debug_assert!(first <= FIRST && key.to_bits() >> 31 == 0);
            (u64::from(key.to_bits()) << 33)
                | ((FIRST - first) << 9)
                | (u64::from(run) << 8)
                | u64::from(least)
        };
        let mut heap = std::mem::take(&mut self.b.by_bound);
        heap.clear();
        let runs = self.cursors[lead].postings().num_l2();
        for r in 0..runs {
            let key = self.cursors[lead].best_key(r, true);
            heap.push(entry(key, true, r));
        }
        let nblocks = self.cursors[lead].postings().num_blocks();
        // The lead's documents in blocks not taken out of the heap yet.
        let mut left = self.cursors[lead].postings().df() as usize;
        while let Some(top) = heap.pop() {
            let (first, run) = ((FIRST - ((top >> 9) & FIRST)) as usize, top & (1 << 8) != 0);
            let i = if run { first / L2_BLOCKS } else { first };
            let key = f32::from_bits((top >> 33) as u32);
            let stop_key = sink
                .floor()
                .map_or(f32::NEG_INFINITY, |f| self.coarse_limits(lead, f, false).1);
            if key <= stop_key {
                break;
            }
            // A run or block of a lead that scores alone bounded by the
            // floor itself holds only documents that may tie the k-th
            // kept one, which enter only below its number (the heap gives
            // such ties in document order). A term's scores take few
            // values, and many of its blocks are bounded by the k-th score
            // exactly (mid-df-1, 200,000 documents: 4.8 of a query's
            // blocks). A sum of clauses ties the floor too rarely to pay
            // for the check (seq-2 AND +0.8 % instructions).
            if self.scores_alone
                && let Some(floor) = sink.0.floor()
                && self.cursors[lead].weight().score_of_key(key) <= floor
                && self.cursors[lead].block_start(first) >= sink.0.floor_ties()
            {
                continue;
            }
            if run {
                // Blocks that cannot beat the floor now never will.
                for b in i * L2_BLOCKS..((i + 1) * L2_BLOCKS).min(nblocks) {
                    let best = self.cursors[lead].best_key(b, false);
                    if best.0 > stop_key {
                        heap.push(entry(best, false, b));
                    }
                }
                continue;
            }
            left -= self.cursors[lead].postings().block_len(i);
            // Its bytes come while it is bounded.
            self.cursors[lead].postings().prefetch_block(i);
            self.cursors[lead].keep_block_key(i, key, top as u8);
            let c = &mut self.cursors[lead];
            c.goto_block(i);
            let (lo, Some(hi)) = (c.block_start(i), c.postings().last_doc(i)) else {
                break;
            };
            for &o in others.iter().chain(&self.must_not) {
                let c = &mut self.cursors[o];
                c.rewind_to(lo);
                if c.is_pending() {
                    c.postings().prefetch_block(c.block());
                }
            }
            // Bounded over the whole block once there is a floor; its
            // windows keep those bounds.
            self.bounds_over = None;
            if let Some(floor) = sink.floor() {
                if self.block_rejected((lead, i), (lo, hi), floor) {
                    sink.dropped(self.cursors[lead].postings().block_len(i));
                    continue;
                }
                self.bounds_over = Some((lo, hi));
            }
            self.cursors[lead].ensure();
            let n = self.cursors[lead].block_rest().len();
            if n > 0 {
                let alone = others.is_empty() && self.must_not.is_empty();
                self.lead_window(lead, others, alone, n, sink);
            }
        }
        // Blocks never taken out of the heap: their documents were not
        // looked at.
        sink.dropped(left);
        self.b.by_bound = heap;
    }

    /// Offers (with `offer`; else only counts) the `matches` that every
    /// clause of `others` (cheapest first) also matches. The first of them
    /// is intersected in bulk, a stretch
    /// of its current block at a time. With no further clause, the
    /// stretch's matches go to [`Self::finish`]; otherwise the sink's
    /// filter may thin them first (when the total may be a lower bound),
    /// and the rest of the clauses, which then see few candidates, confirm
    /// them by forward seeks, each match offered as soon as it is
    /// confirmed, while every clause still sits at or before it.
    fn confirm<S: Sink>(&mut self, others: &[usize], sink: &mut S, offer: bool) {
        let Some((&next, rest)) = others.split_first() else {
            return;
        };
        // A candidate a dense clause does not hold is dropped by its
        // presence bitmap, before any block of that clause is decoded
        // for it.
        let mut told = true;
        for &o in others {
            match self.cursors[o].postings().presence() {
                Some(bits) => retain_present(&mut self.b.matches, bits),
                None => told = false,
            }
        }
        if told && self.phrase.is_none() {
            // Every clause's bitmap has confirmed them: the candidates
            // left are matches, and a block of another clause is decoded
            // only for one that may compete, when it is scored.
            self.finish(sink, offer);
            return;
        }
        // The candidates move to `all`; `matches` takes each stretch's.
        std::mem::swap(&mut self.b.all, &mut self.b.matches);
        let all = std::mem::take(&mut self.b.all);
        let mut from = 0;
        while from < all.len() {
            let c = &mut self.cursors[next];
            if c.seek(all[from]) == NO_MORE {
                break;
            }
            // The block holds a doc >= the first candidate, so `end` is
            // above it and every stretch makes progress.
            let last = c.block_rest().last().copied().unwrap_or(NO_MORE);
            let to = from + count_below(&all[from..], last.saturating_add(1));
            self.b.matches.clear();
            if to - from == 1 {
                // A sparse lead: the seek has answered already.
                if c.doc() == all[from] {
                    self.b.matches.push(all[from]);
                }
            } else {
                kernels::intersect_into(&all[from..to], c.block_rest(), &mut self.b.matches);
            }
            from = to;
            if rest.is_empty() {
                self.finish(sink, offer);
                continue;
            }
            self.filter_unconfirmed(sink);
            for i in 0..self.b.matches.len() {
                let doc = self.b.matches[i];
                if rest.iter().any(|&o| self.cursors[o].seek(doc) != doc)
                    || self
                        .must_not
                        .iter()
                        .any(|&m| self.cursors[m].seek(doc) == doc)
                    || self.seg.is_deleted(doc)
                {
                    continue;
                }
                if self.phrase.is_some() {
                    self.take_phrase(doc, sink, offer);
                    continue;
                }
                sink.count(1);
                if !offer {
                    continue;
                }
                if let Some(floor) = sink.floor()
                    && !self.competes(doc, floor)
                {
                    continue;
                }
                let (cursors, occurs) = (&mut self.cursors, &self.occurs);
                sink.offer(doc, || Self::score(cursors, occurs, doc));
            }
        }
        self.b.all = all;
    }

    /// The union of the `should` clauses, a window at a time. Without
    /// excluded clauses, only the union of what each clause keeps after the
    /// sink's filter is built and offered; the window's matches are then
    /// counted by popcount over a bitset of its postings (a dense window,
    /// at least a posting per 64 documents), or, when the total may be a
    /// lower bound, not at all. Otherwise the window is merged in full.
    fn union<S: Sink>(&mut self, should: &[usize], sink: &mut S) {
        let all = should
            .iter()
            .filter(|&&i| i < 64)
            .fold(0u64, |m, &i| m | 1 << i);
        let mut ends = std::mem::take(&mut self.b.ends);
        ends.clear();
        ends.resize(self.cursors.len(), 0);
        // Windows past the clauses' blocks ([`Self::score_wide`]) for a
        // few clauses, each under one document in [`WIDE_DENSITY`], at
        // least a posting expected per 64 documents between them.
        let docs = u64::from(self.seg.reader.doc_count().max(1));
        let wide = sink.ranks_by_score()
            && self.must_not.is_empty()
            && self.seg.deletes.is_none()
            && self.cursors.len() <= 64
            && (2..=PART_CLAUSES).contains(&should.len())
            && should.iter().map(|&i| self.cursors[i].cost()).sum::<u64>() * 64 >= docs
            && should
                .iter()
                .all(|&i| self.cursors[i].cost() * WIDE_DENSITY < docs);
        loop {
            for &i in should {
                self.cursors[i].ensure();
            }
            let start = should
                .iter()
                .map(|&i| self.cursors[i].doc())
                .min()
                .unwrap_or(NO_MORE);
            if start == NO_MORE {
                break;
            }
            let mut end = match sink.window(start) {
                Window::Take(end) => end,
                Window::Skip(end) => {
                    for &i in should {
                        self.cursors[i].seek(end);
                    }
                    continue;
                }
            };
            let sink_end = end;
            // Inside every clause's current block.
            for &i in should {
                if let Some(&last) = self.cursors[i].block_rest().last() {
                    end = end.min(last.saturating_add(1));
                }
            }
            // The clauses that can lift a document over the floor (all of
            // them without one), found only where they are used: a sparse
            // window whose every match is counted and scored has no use for
            // them.
            let floor = sink.floor();
            let mut essential = None;
            if sink.prefilter()
                && let ess = *essential.insert(self.essential(should, start, end - 1, floor))
                && ess & all != all
                && self.skips_enough(should, ess)
            {
                // Nothing more to count, and a clause that cannot lift a
                // document over the floor: let the essential clauses drive,
                // until every clause is essential again.
                self.b.ends = ends;
                let back = self.union_maxscore(should, sink, start);
                ends = std::mem::take(&mut self.b.ends);
                ends.resize(self.cursors.len(), 0);
                match back {
                    Some(upto) => {
                        for &i in should {
                            self.cursors[i].seek(upto);
                        }
                        continue;
                    }
                    None => break,
                }
            }
            // A wide window once there is a floor, when MaxScore did not
            // take this one and every match is counted or may go
            // uncounted (not for a total exact only up to a threshold: a
            // wide window would count past it what it lets go).
            if wide && floor.is_some() && (sink.prefilter() || sink.counts_all()) {
                let end = sink_end.min(start.saturating_add(WIDE_SPAN));
                self.score_wide(should, (start, end), sink);
                continue;
            }
            let postings = self.window_ends(should.iter().copied(), end, &mut ends);
            // Bits from a word-aligned base, so deletions mask whole words.
            let base = start & !63;
            let words = (end - base).div_ceil(64) as usize;
            let dense = words <= UNION_WORDS && postings >= words;
            // A sink ranked by score counts every window this loop runs
            // (MaxScore runs the others): popcount is cheap.
            let prefilter = sink.prefilter() && !sink.ranks_by_score();
            if self.must_not.is_empty() && (dense || prefilter) {
                let essential =
                    essential.unwrap_or_else(|| self.essential(should, start, end - 1, floor));
                // Scored in bulk with at most 64 clauses, as its per-clause
                // tables hold (more merge, below).
                let scored =
                    !prefilter && dense && sink.ranks_by_score() && self.cursors.len() <= 64;
                if !prefilter && !scored {
                    // Count the union exactly, by popcount.
                    let live = self.count_parts(should, &ends, (base, words));
                    sink.count(live);
                }
                if scored {
                    // Counted there too.
                    if (2..=PART_CLAUSES).contains(&should.len()) && floor.is_some() {
                        self.score_few(should, &ends, (base, words), sink);
                    } else {
                        let ess = (essential, floor);
                        self.score_window(should, &ends, (base, words), ess, false, sink);
                    }
                } else {
                    // Offer the union of what each clause keeps after the
                    // filter, from the essential clauses.
                    self.offer_essential(should, &ends, essential, prefilter, sink);
                }
            } else {
                if sink.ranks_by_score() {
                    // A sparse window: its matches scored, each clause in
                    // clause order (as they are merged, or with a few
                    // clauses, part by part).
                    if (2..=PART_CLAUSES).contains(&should.len()) && self.must_not.is_empty() {
                        self.score_parts(should, &ends, sink);
                    } else {
                        self.score_candidates(should, &ends, u64::MAX, false, sink);
                    }
                } else {
                    self.merge_parts(should.iter().copied(), &ends);
                    self.finish(sink, true);
                }
            }
            for &i in should {
                if self.cursors[i].doc() != NO_MORE {
                    self.cursors[i].move_to(ends[i]);
                }
            }
        }
        self.b.ends = ends;
    }

    /// How many live documents the `should` clauses' parts of a window
    /// hold: a dense window (at least a posting per 64 documents, so
    /// `words` bitset words from `base` cover it), ending at `ends`.
    /// Without deletions a byte per posting is marked, a store each with
    /// nothing read back, and the bytes summed (seq-5 OR exact: setting
    /// bits was 25 % of its time); with them, a popcount over a bitset of
    /// the postings (the candidates' bitset as scratch, left cleared),
    /// deletions masked a word at a time.
    fn count_parts(
        &mut self,
        should: &[usize],
        ends: &[usize],
        (base, words): (u32, usize),
    ) -> usize {
        let b = &mut *self.b;
        b.union_scratch();
        let part = |i: usize| {
            let c = &self.cursors[i];
            &c.block_rest()[..ends[i] - c.pos()]
        };
        debug_assert!(words <= UNION_WORDS);
        debug_assert!(should.iter().map(|&i| part(i).len()).sum::<usize>() >= words);
        if self.seg.deletes.is_none() {
            let seen: &mut [u8; MASK_SPAN] = (&mut b.seen[..MASK_SPAN]).try_into().unwrap();
            for &i in should {
                for &d in part(i) {
                    // In the window: the mask only spares the bounds check.
                    seen[(d - base) as usize & (MASK_SPAN - 1)] = 1;
                }
            }
            let span = &mut seen[..words * 64];
            let live = span
                .chunks_exact(64)
                .map(|c| c.iter().map(|&x| u32::from(x)).sum::<u32>())
                .sum::<u32>();
            span.fill(0);
            return live as usize;
        }
        let all: &mut [u64; UNION_WORDS] = (&mut b.cand[..UNION_WORDS]).try_into().unwrap();
        all[..words].fill(0);
        for &i in should {
            let mut run = WordRun::default();
            for &d in part(i) {
                run.put(all, d - base, true, false);
            }
            run.flush(all);
        }
        let bits = &mut all[..words];
        let live: u32 = match self.seg.deletes.as_deref() {
            None => bits.iter().map(|w| w.count_ones()).sum(),
            Some(del) => {
                let del = del.get(base as usize / 64..).unwrap_or(&[]);
                bits.iter()
                    .enumerate()
                    .map(|(w, b)| (b & !del.get(w).copied().unwrap_or(0)).count_ones())
                    .sum()
            }
        };
        bits.fill(0);
        live as usize
    }

    /// Sets `matches` to the union of `clauses`' parts of the window
    /// (ending at `ends`).
    fn merge_parts(&mut self, clauses: impl Iterator<Item = usize>, ends: &[usize]) {
        self.b.matches.clear();
        for i in clauses {
            let c = &self.cursors[i];
            self.b.tmp.clear();
            kernels::union_into(
                &self.b.matches,
                &c.block_rest()[..ends[i] - c.pos()],
                &mut self.b.tmp,
            );
            std::mem::swap(&mut self.b.matches, &mut self.b.tmp);
        }
    }

    /// Offers the union of what each `essential` clause's part of the
    /// window (ending at `ends`) keeps after the sink's filter; with
    /// `prefilter`, what goes unseen is reported dropped and what is
    /// offered is counted.
    fn offer_essential<S: Sink>(
        &mut self,
        should: &[usize],
        ends: &[usize],
        essential: u64,
        prefilter: bool,
        sink: &mut S,
    ) {
        self.b.matches.clear();
        for &i in should {
            let c = &self.cursors[i];
            let docs = &c.block_rest()[..ends[i] - c.pos()];
            if i < 64 && essential & (1 << i) == 0 {
                if prefilter {
                    sink.dropped(docs.len());
                }
                continue;
            }
            self.b.hits.clear();
            self.b.hits.extend_from_slice(docs);
            sink.filter(&mut self.b.hits);
            if prefilter {
                sink.dropped(docs.len() - self.b.hits.len());
            }
            self.b.tmp.clear();
            kernels::union_into(&self.b.matches, &self.b.hits, &mut self.b.tmp);
            std::mem::swap(&mut self.b.matches, &mut self.b.tmp);
        }
        self.offer_live(sink, prefilter, Some(essential));
    }

    /// Offers candidate `doc` (if live; counted first with `count`) whose
    /// clause-order sum is `sum`: its score when every clause was decoded
    /// (`decoded` is `None`), else its best score, and then it is scored
    /// exactly only if that beats the floor ([`Self::offer_probed`], with
    /// the decoded clauses and whether probing pays).
    #[inline(always)]
    fn offer_sum<S: Sink>(
        &mut self,
        sink: &mut S,
        (doc, sum): (u32, f32),
        decoded: Option<(u64, bool)>,
        count: bool,
    ) {
        if self.seg.is_deleted(doc) {
            return;
        }
        if count {
            sink.count(1);
        }
        // The sum is the score, or its bound: either way one compare
        // saves the offer of what cannot enter.
        if !sink.floor().is_none_or(|floor| sum > floor) {
            return;
        }
        match decoded {
            None => sink.offer(doc, || sum),
            Some(probed) => self.offer_probed(sink, doc, probed),
        }
    }

    /// Scores a dense union window (`words` bitset words from `base`, each
    /// clause's part ending at `ends`) in bulk for a sink that ranks by
    /// score, and offers its candidates in document order (each live one
    /// counted first, with `count`).
    ///
    /// `essential` are the clauses [`Self::essential`] found under
    /// `floor` (with the window's bounds in `b.bounds`: none without a
    /// floor; a floor read later, possibly raised by another thread, could
    /// meet stale bounds). The clauses whose parts are decoded are all of
    /// them, or with `bound_rest` (MaxScore, where the non-essential
    /// clauses are not decoded) the `essential` ones; the others then add their window
    /// bounds in place of scores, so a sum is the candidate's best score,
    /// and its exact score is found by probing them.
    ///
    /// Each document of the window gets a byte saying which decoded
    /// clauses hold it (a bit each; from the [`MASK_CLAUSES`]th on they
    /// share the last bit), and a table, built once per window
    /// ([`mask_bounds`]), says for each such set whether a document of it
    /// may beat the floor: whether those clauses' window bounds and the
    /// undecoded clauses', summed in clause order, do. Only documents
    /// whose set may are candidates, and a candidate that one decoded
    /// clause alone holds is also dropped by its key against that
    /// clause's limit ([`Self::lone_key`]). In a union of terms of
    /// comparable lengths most documents hold one term whose bound alone
    /// is under the floor: such a document costs two loads and a compare
    /// instead of a norm, a score and an offer.
    ///
    /// Every clause, in clause order, adds its score (or bound) to each
    /// candidate it holds, so each sum has the bits of [`Self::score`] (a
    /// document no clause of it reaches stays at 0 plus nothing).
    #[allow(clippy::too_many_arguments)]
    fn score_window<S: Sink>(
        &mut self,
        should: &[usize],
        ends: &[usize],
        (base, words): (u32, usize),
        (essential, floor): (u64, Option<f32>),
        bound_rest: bool,
        sink: &mut S,
    ) {
        let is_essential = |i: usize| i >= 64 || essential & (1 << i) != 0;
        let decoded = |i: usize| !bound_rest || is_essential(i);
        if !bound_rest {
            let lead: usize = should
                .iter()
                .filter(|&&i| is_essential(i))
                .map(|&i| ends[i] - self.cursors[i].pos())
                .sum();
            if !self.bulk_pays(should, ends, essential, lead) {
                // Few candidates against long non-essential lists: score
                // them one by one instead, probing the other clauses.
                let live = self.count_parts(should, ends, (base, words));
                sink.count(live);
                let ess = should.iter().copied().filter(|&i| is_essential(i));
                self.merge_parts(ess, ends);
                self.offer_live(sink, false, Some(essential));
                return;
            }
        }
        // Bounds (and so sets) tell documents apart only under a floor,
        // and with at most 64 clauses ([`Self::essential`]), which the
        // callers see to (the per-clause tables below hold 64): said again
        // here, it spares the loops below their bounds checks (mid-df-2 OR
        // exact 615k instructions a query without it, 578k with it).
        let floor = floor.filter(|_| self.cursors.len() <= 64);
        let b = &mut *self.b;
        b.union_scratch();
        let cand = &mut b.cand[..words];
        cand.fill(0);
        let masks: &mut [u8; MASK_SPAN] = (&mut b.masks[..MASK_SPAN]).try_into().unwrap();
        let at = |x: u32| x as usize & (MASK_SPAN - 1);
        let (slot, shared) = mask_slots(should, decoded);
        // The window's documents, counted as their sets are made.
        let mut seen = 0;
        for &i in should.iter().filter(|&&i| decoded(i)) {
            let c = &self.cursors[i];
            for &d in &c.block_rest()[..ends[i] - c.pos()] {
                let m = &mut masks[at(d - base)];
                seen += usize::from(*m == 0);
                *m |= slot[i];
            }
        }
        let mut table = [true; 1 << MASK_CLAUSES];
        if let Some(floor) = floor {
            mask_bounds(should, decoded, &slot, &b.bounds, floor, &mut table);
        }
        // A set emptied below was decided: not a candidate.
        table[0] = false;
        if !bound_rest {
            let live = match self.seg.deletes {
                None => seen,
                Some(_) => self.count_parts(should, ends, (base, words)),
            };
            sink.count(live);
        }
        // Per decoded clause, the key at or under which a document only it
        // holds cannot compete (none when its bit is shared or such a
        // document is not a candidate anyway).
        let mut lone = [f32::NEG_INFINITY; 64];
        if let Some(floor) = floor {
            for &i in should.iter().filter(|&&i| decoded(i)) {
                let unique = slot[i] != 1 << (MASK_CLAUSES - 1) || shared == 1;
                if unique && table[usize::from(slot[i])] {
                    lone[i] = self.lone_key(should, i, bound_rest.then_some(essential), floor);
                }
            }
        }
        let Buffers {
            cand,
            acc: acc_buf,
            masks: masks_buf,
            bounds,
            ..
        } = &mut *self.b;
        let cand: &mut [u64; UNION_WORDS] = (&mut cand[..UNION_WORDS]).try_into().unwrap();
        let masks: &mut [u8; MASK_SPAN] = (&mut masks_buf[..MASK_SPAN]).try_into().unwrap();
        let acc: &mut [f32; MASK_SPAN] = (&mut acc_buf[..MASK_SPAN]).try_into().unwrap();
        let mut dropped = 0;
        if bound_rest {
            // The undecoded clauses add their bounds to the candidates in
            // clause order, so the candidates are found first.
            for &i in should.iter().filter(|&&i| decoded(i)) {
                let c = &self.cursors[i];
                let mut run = WordRun::default();
                for &d in &c.block_rest()[..ends[i] - c.pos()] {
                    let x = d - base;
                    let keep = table[usize::from(masks[at(x)])];
                    dropped += usize::from(!keep);
                    run.put(cand, x, keep, false);
                }
                run.flush(cand);
            }
        }
        let mut exact = true;
        for &i in should {
            if !decoded(i) {
                exact = false;
                for (wi, &bits) in cand[..words].iter().enumerate() {
                    let mut m = bits;
                    while m != 0 {
                        acc[at(wi as u32 * 64 + m.trailing_zeros())] += bounds[i];
                        m &= m - 1;
                    }
                }
                continue;
            }
            let c = &mut self.cursors[i];
            let n = ends[i] - c.pos();
            if n == 0 {
                continue;
            }
            let w = c.weight();
            let (alone, limit) = (slot[i], lone[i]);
            // The sets of the clauses after this one: a document of none
            // of them is done with here, and its set emptied (unless its
            // bit is shared: those are emptied below).
            let last = 1 << (MASK_CLAUSES - 1);
            let later = if alone == last && shared > 1 {
                u8::MAX
            } else {
                !(alone << 1).wrapping_sub(1)
            };
            let (docs, tfs, norms) = c.rest_with_tfs();
            let mut run = WordRun::default();
            for (&d, &tf) in docs[..n].iter().zip(&tfs[..n]) {
                let x = d - base;
                let m = masks[at(x)];
                let keep = table[usize::from(m)];
                masks[at(x)] = if keep && m & later != 0 { m } else { 0 };
                if !keep {
                    continue;
                }
                let key = w.key(tf, norms.map_or(0, |v| v[d as usize]));
                if m == alone && key <= limit {
                    if bound_rest {
                        // Undecoded clauses before this one added bounds.
                        acc[at(x)] = 0.0;
                        run.put(cand, x, false, true);
                        dropped += 1;
                    }
                    continue;
                }
                acc[at(x)] += w.score_of_key(key);
                run.put(cand, x, true, false);
            }
            run.flush(cand);
        }
        if shared > 1 {
            for &i in should
                .iter()
                .filter(|&&i| decoded(i) && slot[i] == 1 << (MASK_CLAUSES - 1))
            {
                let c = &self.cursors[i];
                for &d in &c.block_rest()[..ends[i] - c.pos()] {
                    masks[at(d - base)] = 0;
                }
            }
        }
        if bound_rest {
            sink.dropped(dropped);
        }
        let probes = !exact && probe_pays(should, essential);
        for wi in 0..words {
            let mut m = self.b.cand[wi];
            while m != 0 {
                let x = wi * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                let sum = std::mem::take(&mut self.b.acc[x]);
                let decoded = (!exact).then_some((essential, probes));
                self.offer_sum(sink, (base + x as u32, sum), decoded, bound_rest);
            }
        }
    }

    /// [`Self::score_window`] for a dense window of two to
    /// [`PART_CLAUSES`] clauses (`should`, in clause order), nothing
    /// excluded, once the sink has a floor, without a byte per posting
    /// set or read: the documents two or more clauses hold are found by
    /// the intersection kernel, each pair of clauses, and each is scored
    /// when its clauses' window bounds summed may beat the floor (the
    /// table of [`mask_bounds`]); a document one clause holds alone is
    /// looked at only when that clause's bound may, thinned by its key in
    /// bulk first ([`kernels::keys_above`]). The window counts its
    /// postings less those of a shared document past its first (with
    /// deletions, [`Self::count_parts`]). Each sum is [`Self::score`]'s
    /// (clause order); the sink sees them out of order ([`AnyOrder`]).
    fn score_few<S: Sink>(
        &mut self,
        should: &[usize],
        ends: &[usize],
        (base, words): (u32, usize),
        sink: &mut S,
    ) {
        debug_assert!(self.must_not.is_empty());
        let deletes = self.seg.deletes.is_some();
        let deleted = deletes.then(|| self.count_parts(should, ends, (base, words)));
        let seg = self.seg;
        let mut clauses = self.cursors.iter_mut().enumerate();
        let parts = should.iter().map(|&i| {
            let c = clauses
                .find_map(|(j, c)| (j == i).then_some(c))
                .expect("a clause");
            let (len, w, least) = (ends[i] - c.pos(), c.weight(), c.block_min_norm());
            let (docs, tfs, norms) = c.rest_with_tfs();
            let (docs, tfs) = (&docs[..len], &tfs[..len]);
            Part {
                docs,
                tfs,
                norms,
                w,
                least,
            }
        });
        score_shared(&part_array(parts), should, deleted, seg, &mut *self.b, sink);
    }

    /// [`Self::score_few`] over a window of up to [`WIDE_SPAN`]
    /// documents from `start` (ending before `end`) that spans several
    /// blocks of each clause: each clause's postings there gathered into
    /// scratch (their frequencies decoded), the clauses' bounds taken
    /// over the whole window, every cursor moved past it. A union of a
    /// few mid-frequency terms cut its windows at each clause's block
    /// ends, a window of about 40 postings a clause (mid-df-3 OR: 109
    /// windows a query), whose set-up (bounds, sets' table, three
    /// intersections) cost more than their postings. It serves a total
    /// counted in full, and one that may be a lower bound where MaxScore
    /// would not skip (every posting of the window is then counted).
    /// Segments without deletions (the count is the postings less the
    /// repeats).
    fn score_wide<S: Sink>(&mut self, should: &[usize], (start, end): (u32, u32), sink: &mut S) {
        debug_assert!(self.must_not.is_empty() && self.seg.deletes.is_none());
        // Every clause of a union without exclusions is one of `should`.
        self.bound_within(start, end - 1);
        let mut wide = std::mem::take(&mut self.b.wide);
        wide.resize_with(PART_CLAUSES, Default::default);
        let mut least = [0u8; PART_CLAUSES];
        for (k, &i) in should.iter().enumerate() {
            let (docs, tfs) = &mut wide[k];
            docs.clear();
            tfs.clear();
            let c = &mut self.cursors[i];
            let mut low = u8::MAX;
            loop {
                c.ensure();
                let n = count_below(c.block_rest(), end);
                if n == 0 {
                    break;
                }
                low = low.min(c.block_min_norm());
                let (d, t, _) = c.rest_with_tfs();
                let whole = n == d.len();
                docs.extend_from_slice(&d[..n]);
                tfs.extend_from_slice(&t[..n]);
                let to = c.pos() + n;
                c.move_to(to);
                if !whole {
                    break;
                }
            }
            // Read only for the documents gathered (none: any norm).
            least[k] = low;
        }
        let parts = (should.iter().zip(&wide).zip(least)).map(|((&i, (docs, tfs)), least)| {
            let c = &self.cursors[i];
            Part {
                docs,
                tfs,
                norms: c.norms(),
                w: c.weight(),
                least,
            }
        });
        score_shared(
            &part_array(parts),
            should,
            None,
            self.seg,
            &mut *self.b,
            sink,
        );
        self.b.wide = wide;
    }

    /// The largest key of clause `i` at which a document of a union
    /// window that no other decoded clause holds cannot beat `floor`: its
    /// score alone, or, under MaxScore (`essential` given: the clauses
    /// outside it are not decoded), its score summed in clause order with
    /// their window bounds in `b.bounds` ([`prune::slot_key_limit`]).
    /// Without MaxScore it depends on the floor alone and is kept until
    /// the floor moves.
    fn lone_key(&mut self, should: &[usize], i: usize, essential: Option<u64>, floor: f32) -> f32 {
        let n = self.cursors.len();
        let Buffers {
            lone_keys,
            lone_for,
            bounds,
            tmp_bounds,
            ..
        } = &mut *self.b;
        if lone_for.len() < n {
            lone_keys.resize(n, 0.0);
            lone_for.resize(n, None);
        }
        let w = self.cursors[i].weight();
        match essential {
            None => {
                if lone_for[i] != Some(floor.to_bits()) {
                    lone_keys[i] = prune::key_limit(floor, w);
                    lone_for[i] = Some(floor.to_bits());
                }
                lone_keys[i]
            }
            Some(essential) => {
                tmp_bounds.clear();
                tmp_bounds.resize(n, 0.0);
                for &j in should.iter().filter(|&&j| essential & (1 << j) == 0) {
                    tmp_bounds[j] = bounds[j];
                }
                prune::slot_key_limit(floor, tmp_bounds, i, w)
            }
        }
    }

    /// [`Self::score_window`] for a sparse window: the candidates are the
    /// union of the decoded clauses' parts of the window (ending at
    /// `ends`; all of them, or with `bound_rest` the `essential` ones),
    /// built clause by clause with each candidate's sum
    /// ([`kernels::union_sum_into`]): a decoded clause's scores, computed
    /// in bulk, are merged in, an undecoded one adds its window bound to
    /// every candidate (and to what a later clause's new candidate starts
    /// from), so each sum has the bits of [`Self::score`] or of the
    /// candidate's best score. Excluded documents are then dropped, and
    /// every live candidate counted and offered by its sum.
    fn score_candidates<S: Sink>(
        &mut self,
        should: &[usize],
        ends: &[usize],
        essential: u64,
        bound_rest: bool,
        sink: &mut S,
    ) {
        let Buffers {
            matches,
            sums,
            tmp,
            tmp_sums,
            scores,
            bounds,
            ..
        } = &mut *self.b;
        matches.clear();
        sums.clear();
        let is_essential = |i: usize| i >= 64 || essential & (1 << i) != 0;
        let (mut exact, mut absent) = (true, 0.0f32);
        for &i in should {
            if bound_rest && !is_essential(i) {
                exact = false;
                let bound = bounds[i];
                for s in sums.iter_mut() {
                    *s += bound;
                }
                absent += bound;
                continue;
            }
            let c = &mut self.cursors[i];
            let n = ends[i] - c.pos();
            if n == 0 {
                continue;
            }
            if matches.is_empty() {
                // The first clause read: its documents and scores are the
                // union so far.
                sums.extend(c.rest_scores(n).map(|s| absent + s));
                matches.extend_from_slice(&c.block_rest()[..n]);
                continue;
            }
            scores.clear();
            scores.extend(c.rest_scores(n));
            let docs = &c.block_rest()[..n];
            tmp.clear();
            tmp_sums.clear();
            kernels::union_sum_into((matches, sums), (docs, scores), absent, (tmp, tmp_sums));
            std::mem::swap(matches, tmp);
            std::mem::swap(sums, tmp_sums);
        }
        if !self.must_not.is_empty() {
            let (cursors, must_not) = (&mut self.cursors, &self.must_not);
            let mut kept = 0;
            for k in 0..matches.len() {
                let d = matches[k];
                if must_not.iter().all(|&m| cursors[m].seek(d) != d) {
                    (matches[kept], sums[kept]) = (d, sums[k]);
                    kept += 1;
                }
            }
            matches.truncate(kept);
            sums.truncate(kept);
        }
        sink.count(self.live_matches());
        // The floor read again only after an offer, the one thing here
        // that raises it (another thread's raise is seen a little later,
        // as it always may be: a floor lower than the shared one only
        // offers documents that the final top k outranks).
        let mut floor = sink.floor();
        let probes = probe_pays(should, essential);
        let ahead = if exact {
            0
        } else {
            self.prefetched(should, essential)
        };
        for k in 0..self.b.matches.len() {
            // Asked for whether or not that candidate will beat the floor:
            // asking only for those whose sum does gained nothing.
            if ahead != 0
                && let Some(&doc) = self.b.matches.get(k + PREFETCH_AHEAD)
            {
                for i in bits(ahead) {
                    if let Some(p) = self.cursors[i].postings().presence() {
                        p.prefetch(doc);
                    }
                }
            }
            let (doc, sum) = (self.b.matches[k], self.b.sums[k]);
            if floor.is_some_and(|floor| sum <= floor) || self.seg.is_deleted(doc) {
                continue;
            }
            if exact {
                sink.offer(doc, || sum);
            } else {
                self.offer_probed(sink, doc, (essential, probes));
            }
            floor = sink.floor();
        }
    }

    /// The clauses (a bit per clause index) whose presence bitmaps a
    /// union window's candidates (`b.matches`) are probed against are
    /// asked for ahead of them ([`PREFETCH_AHEAD`]): the non-essential
    /// ones with a bitmap, when the candidates are a bitmap word (64
    /// documents) or more apart on average, so that each reads words of
    /// its own (rare-common-2 / rare-common-3 OR lower-bound, 1M
    /// documents: 9 % / 7 % less time; rare-common-5 alike). None when
    /// denser, as the candidates of mid-df-3 OR are (the lines read by
    /// the candidates before them: 3 % slower asked for).
    fn prefetched(&self, should: &[usize], essential: u64) -> u64 {
        let m = &self.b.matches;
        let (Some(&first), Some(&last)) = (m.first(), m.last()) else {
            return 0;
        };
        if (m.len() as u64) * 64 > u64::from(last - first) {
            return 0;
        }
        should
            .iter()
            .filter(|&&i| i < 64 && essential & (1 << i) == 0)
            .filter(|&&i| self.cursors[i].postings().presence().is_some())
            .fold(0u64, |m, &i| m | 1 << i)
    }

    /// [`Self::score_candidates`] for a sparse window of a few clauses
    /// (at most [`PART_CLAUSES`], parts ending at `ends`), every document
    /// counted and scored: without their merge. Each clause's part keeps
    /// its documents and scores; a document an earlier clause holds adds
    /// its score to the earliest such clause's entry (found by the
    /// intersection kernel, one earlier part at a time) and is marked
    /// taken (NaN) in its own, so every sum is made in clause order, as
    /// the merge made it. The parts are offered one after another, each
    /// in document order, so the sink sees documents out of order
    /// ([`AnyOrder`]). Most documents of a union of rare terms hold one,
    /// and the merge wrote each of them with its sum (about 27
    /// instructions a document; rare-2 / rare-3 OR lower-bound, synthetic
    /// 200,000 documents: 96.5k / 167.9k instructions a query merged,
    /// 72.8k / 115.2k so).
    fn score_parts<S: Sink>(&mut self, should: &[usize], ends: &[usize], sink: &mut S) {
        debug_assert!((2..=PART_CLAUSES).contains(&should.len()));
        let Buffers {
            matches: common,
            sums: scores,
            ..
        } = &mut *self.b;
        let mut starts = [0; PART_CLAUSES + 1];
        scores.clear();
        for (j, &i) in should.iter().enumerate() {
            let c = &mut self.cursors[i];
            let n = ends[i] - c.pos();
            scores.extend(c.rest_scores(n));
            starts[j + 1] = scores.len();
        }
        let part = |j: usize| {
            let c = &self.cursors[should[j]];
            &c.block_rest()[..ends[should[j]] - c.pos()]
        };
        let mut taken = 0;
        for j in 1..should.len() {
            let later = part(j);
            for p in 0..j {
                let earlier = part(p);
                common.clear();
                kernels::intersect_into(earlier, later, common);
                let (mut x, mut y) = (0, 0);
                for &d in common.iter() {
                    x = kernels::find_next_geq(earlier, x, d);
                    y = kernels::find_next_geq(later, y, d);
                    let (at, of) = (starts[p] + x, starts[j] + y);
                    // Taken by a part before `p`, which added this score.
                    if !scores[at].is_nan() {
                        scores[at] += scores[of];
                        scores[of] = f32::NAN;
                        taken += 1;
                    }
                }
            }
        }
        let seg = self.seg;
        let live = match seg.deletes {
            None => scores.len() - taken,
            Some(_) => (0..should.len())
                .flat_map(|j| part(j).iter().zip(&scores[starts[j]..starts[j + 1]]))
                .filter(|&(&d, s)| !s.is_nan() && !seg.is_deleted(d))
                .count(),
        };
        sink.count(live);
        let sink = &mut AnyOrder(sink);
        let mut floor = sink.floor();
        for j in 0..should.len() {
            for (&doc, &sum) in part(j).iter().zip(&scores[starts[j]..starts[j + 1]]) {
                // NaN: taken by an earlier part.
                if sum.is_nan() || floor.is_some_and(|floor| sum <= floor) || seg.is_deleted(doc) {
                    continue;
                }
                sink.offer(doc, || sum);
                floor = sink.floor();
            }
        }
    }

    /// Whether letting the `essential` clauses drive leaves out enough to
    /// pay for MaxScore's windows: the other clauses hold at least four
    /// times as many documents. (A window that decodes every clause knows
    /// which documents each holds, so a document of an essential clause
    /// alone is bounded by its own score; MaxScore must bound it with the
    /// others' bounds and probe them. With twice as many, mid-df-2 OR
    /// lower-bound cost 699k instructions a query, with four 589k, with
    /// eight 597k, while seq-5 grew by 0.4 % and 5 %.)
    fn skips_enough(&self, should: &[usize], essential: u64) -> bool {
        let (mut ess, mut rest) = (0u64, 0u64);
        for &i in should {
            let cost = self.cursors[i].cost();
            if essential & (1 << i) != 0 {
                ess += cost;
            } else {
                rest += cost;
            }
        }
        rest >= 4 * ess
    }

    /// Whether scoring a window's candidates in bulk costs less than
    /// probing for each of them: the non-essential clauses' postings in
    /// the window (each looked at in bulk) are at most a few per candidate.
    fn bulk_pays(
        &self,
        should: &[usize],
        ends: &[usize],
        essential: u64,
        candidates: usize,
    ) -> bool {
        let others: usize = should
            .iter()
            .filter(|&&i| i < 64 && essential & (1 << i) == 0)
            .map(|&i| ends[i] - self.cursors[i].pos())
            .sum();
        others <= 4 * candidates
    }

    /// Passes, without decoding them, the blocks of `e`, a union's one
    /// essential clause, from its next block on, that no document can beat
    /// `floor` in, as a conjunction's lead passes its blocks
    /// ([`Self::pass_lead_blocks`]): by one key compare a block against
    /// the other clauses' list bounds, by a second-level run's bound, or by
    /// every clause's bound over the block. Both bound any document of the
    /// range, whether `e` holds it or not. Only when `e` has nothing left
    /// before `upto` and its next block starts at or before it (so the
    /// passed blocks cover every document from `upto` on that they end
    /// before). Returns where the union resumes (`upto`, or the first
    /// document the first block not passed may hold).
    fn pass_essential_blocks<S: Sink>(&mut self, e: usize, upto: u32, sink: &mut S) -> u32 {
        let c = &mut self.cursors[e];
        if !c.is_pending() {
            let rest = c.block_rest();
            if rest.last().is_none_or(|&last| last >= upto) {
                return upto;
            }
            let end = c.pos() + rest.len();
            c.move_to(end);
        }
        if !c.is_pending() || c.block_start(c.block()) > upto {
            return upto;
        }
        let from = c.block();
        self.pass_lead_blocks(e, false, sink);
        let c = &self.cursors[e];
        if c.block() == from {
            return upto;
        }
        upto.max(c.block_start(c.block()))
    }

    /// The union of the `should` clauses once nothing more is to be
    /// counted (the total may be a lower bound) and the sink has a floor:
    /// block-max MaxScore. Windows are cut from the essential clauses'
    /// current blocks (and from a non-essential clause's block, by its
    /// skip data alone, when its bound over a longer window would make it
    /// essential); per window every clause is bounded by its impacts, and
    /// only the essential clauses' documents are decoded and merged. Each
    /// candidate's best score (the essential clauses' exact scores and the
    /// others' bounds, summed in clause order) must beat the floor before
    /// the other clauses are probed (seek and score) for its exact score.
    /// Starts at `from`; hands back (the document to resume at) once a
    /// window after the first needs every clause, `None` at the end.
    fn union_maxscore<S: Sink>(
        &mut self,
        should: &[usize],
        sink: &mut S,
        from: u32,
    ) -> Option<u32> {
        let all = should.iter().fold(0u64, |m, &i| m | 1 << i);
        let mut essential = all;
        let mut upto = from;
        let mut ran = false;
        'windows: loop {
            let Some(floor) = sink.floor() else {
                unreachable!("a full queue stays full")
            };
            if essential.count_ones() == 1 {
                upto = self.pass_essential_blocks(essential.trailing_zeros() as usize, upto, sink);
            }
            // The window ends with the first of the essential clauses'
            // current blocks. It starts where the last one ended while a
            // non-essential clause has documents left (their bounds must
            // cover every document passed over), else at the essential
            // clauses' next document.
            let (mut start, mut end) = (NO_MORE, NO_MORE);
            for i in bits(essential) {
                let c = &mut self.cursors[i];
                let d = c.seek(upto);
                if d != NO_MORE {
                    start = start.min(d);
                    let last = c.block_rest().last().copied().unwrap_or(d);
                    end = end.min(last.saturating_add(1));
                }
            }
            if start != NO_MORE && bits(all & !essential).any(|i| !self.cursors[i].is_exhausted()) {
                start = upto;
            }
            if start == NO_MORE {
                // Only clauses that could not compete are left: walk their
                // skip data until one can.
                let rest = bits(all & !essential).filter(|&i| !self.cursors[i].is_exhausted());
                start = upto;
                end = rest
                    .map(|i| self.cursors[i].shallow_end(upto))
                    .min()
                    .unwrap_or(NO_MORE);
                if end == NO_MORE || start >= end {
                    break;
                }
            }
            // At most a bitset's span, so it can be scored in bulk.
            end = end.min((start & !63).saturating_add((UNION_WORDS * 64) as u32));
            let ess = loop {
                let ess = self.essential(should, start, end - 1, Some(floor)) & all;
                let new = ess & !essential;
                if new == 0 {
                    break ess;
                }
                // Bounds over a shorter window may leave it out.
                let shrink = bits(new)
                    .map(|j| self.cursors[j].shallow_end(start))
                    .min()
                    .unwrap_or(NO_MORE);
                if shrink < end {
                    end = shrink;
                    continue;
                }
                // Essential here: enumerate it too, from the window's start.
                essential |= new;
                continue 'windows;
            };
            if ess == all && ran {
                // Every clause essential again: the caller's loop, which
                // counts as it goes, runs the window.
                return Some(upto);
            }
            ran = true;
            if ess != all {
                sink.dropped(1);
            }
            let base = start & !63;
            let words = (end - base).div_ceil(64) as usize;
            debug_assert!(
                words <= UNION_WORDS,
                "windows are capped at the bitset's span"
            );
            let mut ends = std::mem::take(&mut self.b.ends);
            let postings = self.window_ends(bits(ess), end, &mut ends);
            if self.must_not.is_empty() && postings >= words {
                // A dense window: score in bulk.
                let ess = (ess, Some(floor));
                self.score_window(should, &ends, (base, words), ess, true, sink);
            } else {
                // The essential clauses' documents in the window, merged
                // and scored.
                self.score_candidates(should, &ends, ess, true, sink);
            }
            self.b.ends = ends;
            upto = end;
            essential = ess;
            if upto == NO_MORE {
                break;
            }
        }
        None
    }
}

/// Bits of a union window's bitset set or cleared at ascending positions
/// (one clause's documents), gathered a word at a time in registers and
/// merged into the bitset when the word changes: or-ing each document's
/// bit into memory chained every document of a word through the store
/// buffer (seq-5 OR exact spent 40 % of its time counting the union so).
#[derive(Default)]
struct WordRun {
    /// The word gathered, and its bits to set and to clear.
    at: usize,
    set: u64,
    clear: u64,
}

impl WordRun {
    /// Sets (with `set`) or clears (with `clear`) bit `x`, which is at or
    /// after every bit put before.
    #[inline(always)]
    fn put(&mut self, bits: &mut [u64; UNION_WORDS], x: u32, set: bool, clear: bool) {
        let x = x as usize;
        if x >> 6 != self.at {
            self.flush(bits);
            self.at = x >> 6;
        }
        self.set |= u64::from(set) << (x & 63);
        self.clear |= u64::from(clear) << (x & 63);
    }

    /// Merges the gathered word into `bits` (once more after the last
    /// [`Self::put`]).
    #[inline(always)]
    fn flush(&mut self, bits: &mut [u64; UNION_WORDS]) {
        // In the window: the mask only spares the bounds check.
        let w = &mut bits[self.at & (UNION_WORDS - 1)];
        *w = (*w & !self.clear) | self.set;
        (self.set, self.clear) = (0, 0);
    }
}

/// A clause's part of a dense union window ([`Exec::score_few`]).
#[derive(Clone, Copy)]
struct Part<'a> {
    docs: &'a [u32],
    tfs: &'a [u32],
    norms: Option<&'a [u8]>,
    w: &'a TermWeight,
    /// The least norm byte of the clause's block.
    least: u8,
}

impl Part<'_> {
    /// The clause's score of its `x`th document.
    #[inline]
    fn score(&self, x: usize) -> f32 {
        self.w.score_doc(self.tfs[x], self.docs[x], self.norms)
    }
}

/// The core of [`Exec::score_few`] and [`Exec::score_wide`]: the
/// `parts` of a union window's `should` clauses (in clause order; their
/// window bounds in `b.bounds`), scored and counted (`deleted`: the
/// window's live matches when deletions make the count other than the
/// postings less the repeats).
fn score_shared<S: Sink>(
    parts: &PartArray<'_>,
    should: &[usize],
    deleted: Option<usize>,
    seg: &LiveSegment,
    b: &mut Buffers,
    sink: &mut S,
) {
    let Buffers {
        matches: shared,
        hits: kept,
        all: pair,
        tmp,
        bounds,
        ..
    } = b;
    let parts = &parts.0[..parts.1];
    debug_assert!(parts.len() == should.len() && should.is_sorted());
    shared.clear();
    for j in 1..parts.len() {
        for p in 0..j {
            if shared.is_empty() {
                kernels::intersect_into(parts[p].docs, parts[j].docs, shared);
            } else {
                pair.clear();
                kernels::intersect_into(parts[p].docs, parts[j].docs, pair);
                tmp.clear();
                kernels::union_into(shared, pair, tmp);
                std::mem::swap(shared, tmp);
            }
        }
    }
    let sink = &mut AnyOrder(sink);
    let floor = sink.floor();
    let mut table = [true; 1 << MASK_CLAUSES];
    if let Some(floor) = floor {
        let (slot, _) = mask_slots(should, |_| true);
        mask_bounds(should, |_| true, &slot, bounds, floor, &mut table);
    }
    // The shared documents: their sets (a bit per clause), scored
    // when they may compete, and the postings past each one's first.
    let mut at = [0usize; PART_CLAUSES];
    let mut repeats = 0;
    let mut floor = floor;
    for &d in shared.iter() {
        let mut set = 0usize;
        for (j, part) in parts.iter().enumerate() {
            at[j] = kernels::find_next_geq(part.docs, at[j], d);
            set |= usize::from(part.docs.get(at[j]) == Some(&d)) << j;
        }
        repeats += set.count_ones() as usize - 1;
        if !table[set] || seg.is_deleted(d) {
            continue;
        }
        let sum = bits(set as u64).fold(0.0f32, |s, j| s + parts[j].score(at[j]));
        if floor.is_none_or(|floor| sum > floor) {
            sink.offer(d, || sum);
            floor = sink.floor();
        }
    }
    let postings: usize = parts.iter().map(|p| p.docs.len()).sum();
    sink.count(deleted.unwrap_or(postings - repeats));
    // Each clause's documents alone, by their key against the floor
    // as it stands.
    for part in parts
        .iter()
        .enumerate()
        .filter_map(|(j, p)| table[1 << j].then_some(p))
    {
        let w = part.w;
        let (limit, min_tf) = match floor {
            Some(floor) => {
                let limit = prune::key_limit(floor, w);
                (
                    limit,
                    prune::min_tf_of_key(limit, w.inv[usize::from(part.least)]),
                )
            }
            None => (f32::NEG_INFINITY, 0),
        };
        kept.clear();
        keys_above((part.docs, part.tfs, part.norms), w, (limit, min_tf), kept);
        let (mut x, mut y) = (0, 0);
        for &d in kept.iter() {
            y = kernels::find_next_geq(shared, y, d);
            if shared.get(y) == Some(&d) || seg.is_deleted(d) {
                continue;
            }
            x = kernels::find_next_geq(part.docs, x, d);
            let sum = part.score(x);
            if floor.is_none_or(|floor| sum > floor) {
                sink.offer(d, || sum);
                floor = sink.floor();
            }
        }
    }
}

/// The parts of a union window's two to [`PART_CLAUSES`] clauses, in
/// clause order, on the stack, and how many there are.
type PartArray<'a> = ([Part<'a>; PART_CLAUSES], usize);

/// The two to [`PART_CLAUSES`] `parts` as a [`PartArray`].
fn part_array<'a>(mut parts: impl Iterator<Item = Part<'a>>) -> PartArray<'a> {
    let first = parts.next().expect("two clauses or more");
    let mut all = [first; PART_CLAUSES];
    let mut n = 1;
    for (slot, part) in all[1..].iter_mut().zip(&mut parts) {
        *slot = part;
        n += 1;
    }
    debug_assert!(parts.next().is_none(), "at most {PART_CLAUSES} clauses");
    (all, n)
}

/// Each of the `decoded` clauses' bit in a union window document's set,
/// by clause (in clause order, the last bit shared from the
/// [`MASK_CLAUSES`]th on), and how many clauses the last bit stands for.
fn mask_slots(should: &[usize], decoded: impl Fn(usize) -> bool) -> ([u8; 64], usize) {
    let mut slot = [0u8; 64];
    let mut shared = 0;
    for (k, &i) in should.iter().filter(|&&i| decoded(i)).enumerate() {
        slot[i] = 1 << k.min(MASK_CLAUSES - 1);
        shared += usize::from(k >= MASK_CLAUSES - 1);
    }
    (slot, shared)
}

/// Sets `table[m]`, for each set `m` of the `decoded` clauses of
/// `should` (by their bits in `slot`, in clause order, the last bit
/// possibly shared by several), to whether a document those clauses hold
/// may beat `floor`: whether their `bounds` and those of the clauses not
/// decoded, summed in clause order in f32 (as its score is summed, so the
/// sum is at least the score), beat it. A shared bit stands for all of
/// its clauses. One addition a set and clause: the sums over the clauses
/// up to one are those up to the one before, with and without its bound.
fn mask_bounds(
    should: &[usize],
    decoded: impl Fn(usize) -> bool,
    slot: &[u8; 64],
    bounds: &[f32],
    floor: f32,
    table: &mut [bool; 1 << MASK_CLAUSES],
) {
    let mut sums = [0.0f32; 1 << MASK_CLAUSES];
    let mut n = 1;
    for &i in should {
        let b = bounds[i];
        if !decoded(i) {
            for s in &mut sums[..n] {
                *s += b;
            }
        } else if usize::from(slot[i]) >= n {
            // A new bit: the sets with it are those without, plus it.
            let (low, high) = sums.split_at_mut(n);
            for (h, &l) in high[..n].iter_mut().zip(low.iter()) {
                *h = l + b;
            }
            n *= 2;
        } else {
            // The shared bit, already there.
            let bit = usize::from(slot[i]);
            for (m, s) in sums[..n].iter_mut().enumerate() {
                if m & bit != 0 {
                    *s += b;
                }
            }
        }
    }
    for (t, &s) in table[..n].iter_mut().zip(&sums[..n]) {
        *t = s > floor;
    }
}

/// Keeps the documents of `docs` that `bits` holds, in order, without a
/// branch on each (about half of a common-term conjunction's candidates
/// are not held: a branch on them is mispredicted as often).
fn retain_present(docs: &mut Vec<u32>, bits: Presence<'_>) {
    let mut kept = 0;
    for i in 0..docs.len() {
        let d = docs[i];
        docs[kept] = d;
        kept += usize::from(bits.contains(d));
    }
    docs.truncate(kept);
}

/// The indexes of the set bits of `mask`, ascending.
fn bits(mask: u64) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            i
        })
    })
}

/// Appends to `out` each of `docs` (with their frequencies `tfs` and the
/// field's `norms`) whose key under `w` is above `limit`
/// ([`kernels::keys_above`]; those under `min_tf` are not looked at).
fn keys_above(
    (docs, tfs, norms): (&[u32], &[u32], Option<&[u8]>),
    w: &TermWeight,
    (limit, min_tf): (f32, u32),
    out: &mut Vec<u32>,
) {
    match norms {
        // Every document's key in bulk, 8 at a time.
        Some(norms) => kernels::keys_above((docs, tfs), (norms, &w.inv), (limit, min_tf), out),
        // A field without norms: every document's factor is norm 0's.
        None => {
            let keep = docs
                .iter()
                .zip(tfs)
                .filter(|&(_, &tf)| w.key(tf, 0) > limit);
            out.extend(keep.map(|(&d, _)| d));
        }
    }
}

/// How many of the ascending `docs` are below `end`.
#[inline]
fn count_below(docs: &[u32], end: u32) -> usize {
    match docs.last() {
        Some(&l) if l < end => docs.len(),
        _ => kernels::find_next_geq(docs, 0, end),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Each set's entry is whether its clauses' bounds (every clause
        /// of a shared bit) and the undecoded clauses', summed in clause
        /// order, beat the floor: floors at each such sum and a few ULPs
        /// either side, as well as random ones.
        #[test]
        fn a_sets_entry_is_its_clause_order_sum_against_the_floor(
            bounds in proptest::collection::vec(prop_oneof![8 => 0.0f32..20.0, 1 => Just(0.0f32)], 1..12),
            decoded_bits in any::<u16>(),
            floor_pick in any::<u16>(),
            nudge in -3i32..=3,
        ) {
            let n = bounds.len();
            let mut decoded: Vec<bool> = (0..n).map(|i| decoded_bits & (1 << i) != 0).collect();
            decoded[0] = true;
            let should: Vec<usize> = (0..n).collect();
            let (slot, _) = mask_slots(&should, |i| decoded[i]);
            let sets = 1usize << decoded.iter().filter(|d| **d).count().min(MASK_CLAUSES);
            let sum_of = |m: usize| {
                should.iter().fold(0.0f32, |s, &i| {
                    if !decoded[i] || m & usize::from(slot[i]) != 0 { s + bounds[i] } else { s }
                })
            };
            let at = sum_of(usize::from(floor_pick) % sets);
            let floor = f32::from_bits((at.to_bits() as i32 + nudge).max(0) as u32);
            let mut table = [false; 1 << MASK_CLAUSES];
            mask_bounds(&should, |i| decoded[i], &slot, &bounds, floor, &mut table);
            for (m, &t) in table.iter().enumerate().take(sets) {
                prop_assert_eq!(t, sum_of(m) > floor, "set {:#b} floor {} bounds {:?} decoded {:?}", m, floor, bounds, decoded);
            }
        }
    }
}
