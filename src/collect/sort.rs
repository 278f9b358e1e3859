//! The SortCollector: one collector for every sort specification.
//!
//! A [`SortSpec`] compiles, per segment, into an array of
//! comparator [`Action`]s, one per rule, specialised per ord width (through
//! `format::ords::get_w`) and with the direction folded into the key. A
//! candidate document is compared with the queue's bottom (worst kept hit)
//! rule by rule until one decides; ties after the last rule lose, because
//! documents arrive in ascending order and the lower doc number wins. The
//! score is computed at most once per document, and only when a rule needs
//! it or the spec asks for scores (`track_scores`: then for every hit that
//! enters the queue); a sort by fields alone does no BM25 work.
//!
//! Ords are per segment. When the collector moves to a new segment it
//! translates the bottom's values into the new segment's ord space by a
//! binary search of that segment's sorted values, instead of starting over;
//! a value absent from the segment maps between two ords. Every kept hit
//! carries one key per rule in the current segment's key space, translated
//! the same way at each segment switch; two hits whose keys fall between
//! the same two ords compare by value, so the queue always holds the true
//! best hits. Each hit keeps its sort values, so hits from several
//! segments, searchers or machines merge exactly.
//!
//! Keys: for a document with ord `o`, the ascending key is `2o + 1`; a
//! value between ords `p - 1` and `p` is `2p`; descending keys are mirrored
//! (`K - key`); a missing value is `u64::MAX` in both directions, so it sorts
//! last either way. Smaller keys are better.

use std::cmp::Ordering;

use crate::collect::{Hit, RESERVE_HITS, Sink, SortKey, SortSpec, Tally, Window};
use crate::document::Value;
use crate::format::ords;
use crate::read::{LiveSegment, SortColumn};
use crate::schema::{FieldId, FieldType, Schema};

/// Distinct values whose translation into a new segment's key space is
/// remembered while the kept hits are translated.
const RECENT_VALUES: usize = 8;

/// The most ord blocks one [`Sink::window`] answer takes.
const WINDOW_BLOCKS: usize = 8;

/// A rule, resolved against the schema.
#[derive(Clone, Copy, Debug)]
enum Rule {
    Score {
        desc: bool,
    },
    Doc {
        desc: bool,
    },
    Field {
        field: FieldId,
        ty: FieldType,
        desc: bool,
        /// Index among the field rules (the hit's value slot).
        slot: usize,
    },
}

/// One field value kept with a hit.
#[derive(Clone, Copy, Debug, Default)]
struct Slot<'a> {
    /// The ord in the segment the hit was collected in (meaningful until
    /// the hit is resolved).
    ord: u32,
    missing: bool,
    /// Order-preserving key of a numeric value.
    num: u64,
    /// A string value, borrowed from the segment's sort column (copied
    /// only into a returned [`Hit`]).
    text: &'a str,
}

/// A kept hit's fixed-size part. Its keys (the doc number last) and values
/// live in the collector's flat `keys` and `slots` arrays, at the entry's
/// index.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    score: f32,
    /// Whether the slots' values (`num`, `text`) are filled in; keys alone
    /// order hits of one segment. Hits of earlier segments are always
    /// resolved (see [`SortCollector::set_segment`]).
    resolved: bool,
}

/// A kept hit's keys and values, as [`compare`] reads them.
#[derive(Clone, Copy)]
struct Kept<'s, 'a> {
    /// One key per rule in the current segment's key space (smaller is
    /// better), then the doc number.
    keys: &'s [u64],
    slots: &'s [Slot<'a>],
}

/// A field rule's action for the current segment.
#[derive(Clone, Copy)]
struct OrdAction<'a> {
    ords: &'a [u8],
    missing: u32,
    /// `key = ((2 * ord + 1) ^ flip).wrapping_add(add)`: identity ascending,
    /// `K - x` descending.
    flip: u64,
    add: u64,
    slot: usize,
    /// Present values (ords `0..card`).
    card: u32,
}

impl OrdAction<'_> {
    #[inline(always)]
    fn key_of_ord(&self, o: u32) -> u64 {
        if o == self.missing {
            u64::MAX
        } else {
            ((2 * u64::from(o) + 1) ^ self.flip).wrapping_add(self.add)
        }
    }

    /// The key of a value that sorts between ords `p - 1` and `p`.
    #[inline]
    fn key_between(&self, p: u32) -> u64 {
        ((2 * u64::from(p)) ^ self.flip).wrapping_add(self.add)
    }

    #[inline(always)]
    fn key<const W: u8>(&self, doc: u32) -> u64 {
        self.key_of_ord(ords::get_w::<W>(self.ords, doc as usize))
    }

    /// The ords whose key is at most `bottom`, as `(first, count - 1)`;
    /// `None` when there are none. Keys are linear in the ord, so the
    /// bounds follow from `bottom` by arithmetic; the missing ord (above
    /// every present one) passes only a missing bottom.
    fn accepted(&self, bottom: u64) -> Option<(u32, u32)> {
        if bottom == u64::MAX {
            return Some((0, u32::MAX));
        }
        let card = u64::from(self.card);
        let (lo, hi) = if self.flip == 0 {
            // 2o + 1 <= bottom  <=>  o < ceil(bottom / 2).
            (0, bottom.div_ceil(2).min(card))
        } else {
            // K - (2o + 1) <= bottom, with K = add - 1,
            // <=>  o >= (K - bottom) / 2.
            let k = self.add - 1;
            ((k.saturating_sub(bottom) / 2).min(card), card)
        };
        (lo < hi).then(|| (lo as u32, (hi - lo - 1) as u32))
    }

    /// Keeps the `docs` whose ord is in `accepted` ([`Self::accepted`]).
    fn filter<const W: u8>(&self, accepted: Option<(u32, u32)>, docs: &mut Vec<u32>) {
        let Some((first, span)) = accepted else {
            docs.clear();
            return;
        };
        // Branch-free compaction: write every doc, advance past the kept ones.
        let mut k = 0;
        for i in 0..docs.len() {
            let d = docs[i];
            docs[k] = d;
            let o = ords::get_w::<W>(self.ords, d as usize);
            k += usize::from(o.wrapping_sub(first) <= span);
        }
        docs.truncate(k);
    }
}

/// A `match` on an [`Action`] whose field arms all run `$body`, with `$a`
/// bound to the [`OrdAction`] and `$w` to the ord width as a constant (so
/// the body is monomorphised per width); the remaining arms follow.
macro_rules! by_width {
    ($action:expr, $a:ident, $w:ident => $body:expr, $($rest:tt)*) => {
        match $action {
            Action::Ord1($a) => {
                const $w: u8 = 1;
                $body
            }
            Action::Ord2($a) => {
                const $w: u8 = 2;
                $body
            }
            Action::Ord4($a) => {
                const $w: u8 = 4;
                $body
            }
            Action::Ord8($a) => {
                const $w: u8 = 8;
                $body
            }
            Action::Ord16($a) => {
                const $w: u8 = 16;
                $body
            }
            Action::Ord32($a) => {
                const $w: u8 = 32;
                $body
            }
            $($rest)*
        }
    };
}

/// A compiled comparator step.
#[derive(Clone, Copy)]
enum Action<'a> {
    Ord1(OrdAction<'a>),
    Ord2(OrdAction<'a>),
    Ord4(OrdAction<'a>),
    Ord8(OrdAction<'a>),
    Ord16(OrdAction<'a>),
    Ord32(OrdAction<'a>),
    Score { desc: bool },
    Doc { desc: bool },
}

impl<'a> Action<'a> {
    fn ord(&self) -> Option<&OrdAction<'a>> {
        match self {
            Action::Ord1(a)
            | Action::Ord2(a)
            | Action::Ord4(a)
            | Action::Ord8(a)
            | Action::Ord16(a)
            | Action::Ord32(a) => Some(a),
            _ => None,
        }
    }
}

/// Collects the best `capacity` hits in sort-spec order.
///
/// The queue is allocated in [`SortCollector::new`] (up to
/// `RESERVE_HITS` hits; a deeper page grows it while it fills): kept hits
/// are indexes into flat arrays, and a hit that enters a full queue reuses
/// the evicted one's place. Nothing is allocated per hit once the queue is
/// full, until [`SortCollector::into_hits`] builds the returned ones.
pub struct SortCollector<'a> {
    rules: Vec<Rule>,
    needs_score: bool,
    capacity: usize,
    /// Keys per hit: one per rule, then the doc number.
    stride: usize,
    /// Field rules: value slots per hit.
    fields: usize,
    entries: Vec<Entry>,
    /// Entry `i`'s keys at `keys[i * stride..(i + 1) * stride]`, with
    /// `stride = rules.len() + 1`: one key per rule in the current
    /// segment's key space (smaller is better), then the doc number, so
    /// that one slice compare orders hits while no key lies between two
    /// ords (see [`SortCollector::worse`]).
    keys: Vec<u64>,
    /// Entry `i`'s field values at `slots[i * fields..(i + 1) * fields]`.
    slots: Vec<Slot<'a>>,
    /// Indexes into `entries`, a binary heap with the worst hit at the root.
    heap: Vec<u32>,
    // Current segment.
    base: u32,
    columns: Vec<Option<SortColumn<'a>>>,
    actions: Vec<Action<'a>>,
    /// Where the bottom's keys start in `keys` (while the queue is full).
    bottom: usize,
    bottom_score: f32,
    /// The first rule's ords that can still compete ([`OrdAction::accepted`]).
    accepted: Option<(u32, u32)>,
    /// Whether some kept hit has a between-ords key; until one does, keys
    /// alone order the heap (see [`compare`]).
    between: bool,
    tally: Tally,
    scored: u64,
}

impl<'a> SortCollector<'a> {
    /// A collector for `spec` keeping `capacity` hits. `spec`'s field rules
    /// must name sortable fields of `schema` (checked by the caller). Once
    /// `tally` allows it, [`Sink::window`] may skip blocks (and the total
    /// becomes a lower bound).
    pub fn new(
        spec: &SortSpec,
        schema: &Schema,
        capacity: usize,
        tally: Tally,
    ) -> SortCollector<'a> {
        let mut rules = Vec::new();
        for r in &spec.rules {
            let rule = match r.key {
                SortKey::Score => Rule::Score { desc: r.descending },
                SortKey::Doc => Rule::Doc { desc: r.descending },
                SortKey::Field(field) => Rule::Field {
                    field,
                    ty: schema.def(field).ty,
                    desc: r.descending,
                    slot: rules
                        .iter()
                        .filter(|r| matches!(r, Rule::Field { .. }))
                        .count(),
                },
            };
            // Rules after a doc rule never decide (doc numbers are unique)
            // but still give each hit its sort values.
            rules.push(rule);
        }
        let needs_score = spec.needs_score();
        let fields = rules
            .iter()
            .filter(|r| matches!(r, Rule::Field { .. }))
            .count();
        let stride = rules.len() + 1;
        // A deep page (a huge offset + limit) grows the queue as it fills
        // instead of reserving it all up front.
        let reserve = capacity.min(RESERVE_HITS);
        SortCollector {
            needs_score,
            capacity,
            stride,
            fields,
            entries: Vec::with_capacity(reserve),
            keys: Vec::with_capacity(reserve * stride),
            slots: Vec::with_capacity(reserve * fields),
            heap: Vec::with_capacity(reserve),
            base: 0,
            columns: Vec::with_capacity(rules.len()),
            actions: Vec::with_capacity(rules.len()),
            bottom: 0,
            bottom_score: 0.0,
            accepted: None,
            between: false,
            tally,
            scored: 0,
            rules,
        }
    }

    fn is_full(&self) -> bool {
        self.capacity > 0 && self.heap.len() == self.capacity
    }

    /// Entry `i`'s keys and values.
    #[inline]
    fn kept(&self, i: usize) -> Kept<'_, 'a> {
        let (n, f) = (self.stride, self.fields);
        Kept {
            keys: &self.keys[i * n..(i + 1) * n],
            slots: &self.slots[i * f..(i + 1) * f],
        }
    }

    /// Moves to the next segment of the snapshot, `seg`. The hits kept so
    /// far are resolved first (their ords mean nothing in `seg`).
    pub fn set_segment(&mut self, seg: &'a LiveSegment) {
        self.resolve_all();
        self.base = seg.base as u32;
        self.columns.clear();
        self.actions.clear();
        for rule in &self.rules {
            match *rule {
                Rule::Score { desc } => {
                    self.columns.push(None);
                    self.actions.push(Action::Score { desc });
                }
                Rule::Doc { desc } => {
                    self.columns.push(None);
                    self.actions.push(Action::Doc { desc });
                }
                Rule::Field {
                    field, desc, slot, ..
                } => {
                    let col = seg
                        .reader
                        .sort_column(field)
                        .expect("sortable fields have an ord array in every segment");
                    let (flip, add) = if desc {
                        // K - x with K = 2 * cardinality + 2.
                        (u64::MAX, 2 * u64::from(col.cardinality) + 3)
                    } else {
                        (0, 0)
                    };
                    let a = OrdAction {
                        ords: col.packed_ords(),
                        missing: col.missing(),
                        flip,
                        add,
                        slot,
                        card: col.cardinality,
                    };
                    self.actions.push(match col.width {
                        1 => Action::Ord1(a),
                        2 => Action::Ord2(a),
                        4 => Action::Ord4(a),
                        8 => Action::Ord8(a),
                        16 => Action::Ord16(a),
                        _ => Action::Ord32(a),
                    });
                    self.columns.push(Some(col));
                }
            }
        }
        // The kept hits' field keys, translated into this segment's key
        // space: an absent value falls between two ords (an even key). Kept
        // hits share few values, so the last few translations are reused.
        let (n, f) = (self.stride, self.fields);
        for (i, action) in self.actions.iter().enumerate() {
            let Some(a) = action.ord() else { continue };
            let col = self.columns[i].as_ref().expect("field rule has a column");
            let numeric = matches!(col.ty, FieldType::I64 | FieldType::F64);
            let mut recent: [(u64, &str, u64); RECENT_VALUES] = [(0, "", 0); RECENT_VALUES];
            let mut filled = 0;
            for e in 0..self.entries.len() {
                let s = &self.slots[e * f + a.slot];
                let same = |&&(num, text, _): &&(u64, &str, u64)| {
                    if numeric {
                        num == s.num
                    } else {
                        text == s.text
                    }
                };
                self.keys[e * n + i] = if s.missing {
                    u64::MAX
                } else if let Some(&(_, _, key)) =
                    recent[..filled.min(RECENT_VALUES)].iter().find(same)
                {
                    key
                } else {
                    let key = match col.find(s.num, s.text) {
                        Ok(o) => a.key_of_ord(o),
                        Err(p) => {
                            self.between = true;
                            a.key_between(p)
                        }
                    };
                    recent[filled % RECENT_VALUES] = (s.num, s.text, key);
                    filled += 1;
                    key
                };
            }
        }
        if self.is_full() {
            self.update_bottom();
        }
    }

    /// The bottom's key for rule `i` (the queue is full).
    #[inline(always)]
    fn bottom_key(&self, i: usize) -> u64 {
        self.keys[self.bottom + i]
    }

    /// Notes the new bottom (worst kept hit): where its keys are, its
    /// score, and the first rule's ords that can still compete.
    fn update_bottom(&mut self) {
        let bottom = self.heap[0] as usize;
        self.bottom_score = self.entries[bottom].score;
        self.bottom = bottom * self.stride;
        if let Some(a) = self.actions.first().and_then(Action::ord) {
            self.accepted = a.accepted(self.bottom_key(0));
        }
    }

    #[inline]
    fn count_scored(&mut self, cached: Option<f32>) {
        self.scored += u64::from(cached.is_some());
    }

    fn insert(&mut self, doc: u32, score: Option<f32>) {
        let (n, f) = (self.stride, self.fields);
        let was_full = self.is_full();
        let idx = if was_full {
            // Take the evicted bottom's place.
            self.heap[0] as usize
        } else {
            // Within the room reserved in `new` for the usual page sizes.
            let idx = self.entries.len();
            self.entries.push(Entry::default());
            self.keys.resize((idx + 1) * n, 0);
            self.slots.resize((idx + 1) * f, Slot::default());
            self.heap.push(idx as u32);
            idx
        };
        let doc_id = self.base + doc;
        let score = score.unwrap_or(0.0);
        self.entries[idx] = Entry {
            score,
            resolved: false,
        };
        let keys = &mut self.keys[idx * n..(idx + 1) * n];
        let slots = &mut self.slots[idx * f..(idx + 1) * f];
        for (key, action) in keys.iter_mut().zip(&self.actions) {
            *key = by_width!(action, a, W => {
                    let o = ords::get_w::<W>(a.ords, doc as usize);
                    let s = &mut slots[a.slot];
                    s.ord = o;
                    s.missing = o == a.missing;
                    a.key_of_ord(o)
                },
                Action::Score { desc } => score_key(score, *desc),
                Action::Doc { desc } => u64::from(if *desc { !doc_id } else { doc_id }),
            );
        }
        keys[n - 1] = u64::from(doc_id);
        if was_full {
            self.sift_down(0);
        } else {
            self.sift_up(self.heap.len() - 1);
        }
        if self.is_full() {
            self.update_bottom();
        }
    }

    /// Fills in the values of the current segment's hits (the only ones
    /// not yet resolved).
    fn resolve_all(&mut self) {
        let f = self.fields;
        for (i, e) in self.entries.iter_mut().enumerate() {
            if !e.resolved {
                resolve(
                    &mut self.slots[i * f..(i + 1) * f],
                    &self.actions,
                    &self.columns,
                );
                e.resolved = true;
            }
        }
    }

    /// Entry `i`'s keys.
    #[inline(always)]
    fn keys_of(&self, i: u32) -> &[u64] {
        let n = self.stride;
        &self.keys[i as usize * n..(i as usize + 1) * n]
    }

    /// How entry `a` sorts against entry `b`.
    #[inline(always)]
    fn order(&self, a: u32, b: u32) -> Ordering {
        if self.between {
            compare(&self.rules, self.kept(a as usize), self.kept(b as usize))
        } else {
            // What `compare` does when no key lies between two ords: the
            // keys, then the doc number (the last key).
            self.keys_of(a).cmp(self.keys_of(b))
        }
    }

    /// Whether entry `a` sorts after entry `b` (is worse).
    #[inline(always)]
    fn worse(&self, a: u32, b: u32) -> bool {
        self.order(a, b) == Ordering::Greater
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let p = (i - 1) / 2;
            if !self.worse(self.heap[i], self.heap[p]) {
                break;
            }
            self.heap.swap(i, p);
            i = p;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.worse(self.heap[r], self.heap[l]) {
                r
            } else {
                l
            };
            if !self.worse(self.heap[c], self.heap[i]) {
                break;
            }
            self.heap.swap(i, c);
            i = c;
        }
    }

    /// Matching documents offered (all of them, unless blocks were skipped).
    pub fn total(&self) -> u64 {
        self.tally.total()
    }

    /// Whether [`Self::total`] is exact (no block or document was skipped
    /// before it was known to match).
    pub fn total_is_exact(&self) -> bool {
        self.tally.is_exact()
    }

    /// Scores computed.
    pub fn scored(&self) -> u64 {
        self.scored
    }

    /// The kept hits in order, skipping the first `offset`.
    pub fn into_hits(mut self, offset: usize) -> Vec<Hit> {
        self.resolve_all();
        // Doc numbers are unique, so the order is total and an unstable
        // sort gives the one answer.
        let mut order = std::mem::take(&mut self.heap);
        order.sort_unstable_by(|&a, &b| self.order(a, b));
        order
            .iter()
            .skip(offset)
            .map(|&i| {
                let (e, kept) = (self.entries[i as usize], self.kept(i as usize));
                // The doc number is the last key.
                let doc = kept.keys[self.rules.len()];
                let sort_values = self
                    .rules
                    .iter()
                    .map(|r| match *r {
                        Rule::Score { .. } => Some(Value::F64(f64::from(e.score))),
                        Rule::Doc { .. } => Some(Value::I64(doc as i64)),
                        Rule::Field { ty, slot, .. } => {
                            let s = &kept.slots[slot];
                            (!s.missing).then(|| slot_value(ty, s))
                        }
                    })
                    .collect();
                Hit::new(doc, e.score, sort_values)
            })
            .collect()
    }
}

impl Sink for SortCollector<'_> {
    /// With skipping allowed, the queue full and a field as the first rule,
    /// windows end at ord-block boundaries, and a block whose values
    /// cannot beat the bottom is skipped.
    #[inline]
    fn window(&mut self, start: u32) -> Window {
        let Some(a) = self.actions.first().and_then(Action::ord) else {
            return Window::Take(u32::MAX);
        };
        if !self.tally.may_skip() {
            return Window::Take(u32::MAX);
        }
        let block = start as usize / ords::ORD_BLOCK;
        let end_of = |b: usize| ((b + 1) * ords::ORD_BLOCK).min(u32::MAX as usize) as u32;
        if !self.is_full() {
            // Nothing can be skipped yet; a window cut short would only cut
            // the caller's blocks. The caller asks again at its next block.
            return Window::Take(end_of(block + WINDOW_BLOCKS - 1));
        }
        let col = self.columns[0].as_ref().expect("field rule has a column");
        let competitive = |b: usize| {
            let (lo, hi) = col.block_bounds(b);
            a.key_of_ord(if a.flip == 0 { lo } else { hi }) <= self.bottom_key(0)
        };
        if !competitive(block) {
            self.tally.dropped(1);
            return Window::Skip(end_of(block));
        }
        // Take the run of blocks that can compete now, up to a bound, so
        // windows stay long while a better bottom still gets its chance.
        let last = (block + WINDOW_BLOCKS).min(col.num_blocks());
        let mut b = block + 1;
        while b < last && competitive(b) {
            b += 1;
        }
        Window::Take(end_of(b - 1))
    }

    #[inline]
    fn prefilter(&self) -> bool {
        self.tally.may_skip()
    }

    fn counts_all(&self) -> bool {
        self.tally.counts_all()
    }

    fn filter(&self, docs: &mut Vec<u32>) {
        let action = if self.is_full() {
            self.actions.first()
        } else {
            None
        };
        if let Some(action) = action {
            by_width!(action, a, W => a.filter::<W>(self.accepted, docs), _ => {});
        }
    }

    #[inline]
    fn dropped(&mut self, n: usize) {
        self.tally.dropped(n);
    }

    #[inline]
    fn count(&mut self, n: usize) {
        self.tally.count(n);
    }

    #[inline]
    fn offer(&mut self, doc: u32, mut score: impl FnMut() -> f32) {
        if self.capacity == 0 {
            return;
        }
        let mut cached: Option<f32> = None;
        if self.is_full() {
            let mut competitive = false;
            for (i, action) in self.actions.iter().enumerate() {
                let key = by_width!(action, a, W => a.key::<W>(doc),
                    Action::Score { desc } => {
                        let s = *cached.get_or_insert_with(&mut score);
                        match s.total_cmp(&self.bottom_score) {
                            Ordering::Equal => continue,
                            c => {
                                competitive = (c == Ordering::Greater) == *desc;
                                break;
                            }
                        }
                    }
                    // The candidate's doc number is larger than every kept one.
                    Action::Doc { desc } => {
                        competitive = *desc;
                        break;
                    }
                );
                let bottom = self.bottom_key(i);
                if key != bottom {
                    competitive = key < bottom;
                    break;
                }
            }
            if !competitive {
                self.count_scored(cached);
                return;
            }
        }
        if self.needs_score && cached.is_none() {
            cached = Some(score());
        }
        self.count_scored(cached);
        self.insert(doc, cached);
    }
}

/// Fills in the values (`slots`) of a hit of the segment `actions` and
/// `columns` describe.
fn resolve<'a>(slots: &mut [Slot<'a>], actions: &[Action], columns: &[Option<SortColumn<'a>>]) {
    for (action, col) in actions.iter().zip(columns) {
        let (Some(a), Some(col)) = (action.ord(), col) else {
            continue;
        };
        let s = &mut slots[a.slot];
        if !s.missing {
            match col.numeric_key(s.ord) {
                Some(k) => s.num = k,
                None => s.text = col.str_at(s.ord),
            }
        }
    }
}

fn slot_value(ty: FieldType, s: &Slot) -> Value {
    match ty {
        FieldType::I64 => Value::I64(ords::key_to_i64(s.num)),
        FieldType::F64 => Value::F64(ords::key_to_f64(s.num)),
        _ => Value::Str(s.text.to_owned()),
    }
}

/// An order-preserving key of a score, smaller for better scores.
fn score_key(score: f32, desc: bool) -> u64 {
    let b = score.to_bits();
    // The IEEE total order as an unsigned order (as `f32::total_cmp`).
    let asc = if b >> 31 == 1 { !b } else { b | 0x8000_0000 };
    u64::from(if desc { !asc } else { asc })
}

/// Orders two kept hits: by their keys rule by rule, then by doc number.
/// Keys of the current segment are exact; a kept hit of an earlier segment
/// whose value is absent here has an even key between two ords, and two
/// such hits with the same key compare by value.
fn compare(rules: &[Rule], a: Kept, b: Kept) -> Ordering {
    for (i, r) in rules.iter().enumerate() {
        let (x, y) = (a.keys[i], b.keys[i]);
        if x != y {
            return x.cmp(&y);
        }
        if let Rule::Field { ty, desc, slot, .. } = *r
            && x & 1 == 0
        {
            let (p, q) = (&a.slots[slot], &b.slots[slot]);
            let o = if matches!(ty, FieldType::I64 | FieldType::F64) {
                p.num.cmp(&q.num)
            } else {
                p.text.as_bytes().cmp(q.text.as_bytes())
            };
            let o = if desc { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
    }
    // The doc numbers.
    a.keys[rules.len()].cmp(&b.keys[rules.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `accepted` agrees with checking every ord's key, for every bottom
    /// key a kept hit can have (at an ord, between two ords, missing).
    #[test]
    fn accepted_matches_a_scan_of_the_ords() {
        for card in 0..40u32 {
            for desc in [false, true] {
                let (flip, add) = if desc {
                    (u64::MAX, 2 * u64::from(card) + 3)
                } else {
                    (0, 0)
                };
                let a = OrdAction {
                    ords: &[],
                    missing: u32::MAX,
                    flip,
                    add,
                    slot: 0,
                    card,
                };
                let between = (0..=card).map(|p| a.key_between(p));
                let at = (0..card).map(|o| a.key_of_ord(o));
                for bottom in between.chain(at).chain([u64::MAX]) {
                    let want = if bottom == u64::MAX {
                        Some((0, u32::MAX))
                    } else {
                        let ok: Vec<u32> =
                            (0..card).filter(|&o| a.key_of_ord(o) <= bottom).collect();
                        assert!(ok.windows(2).all(|w| w[1] == w[0] + 1));
                        ok.first().map(|&lo| (lo, ok.len() as u32 - 1))
                    };
                    assert_eq!(
                        a.accepted(bottom),
                        want,
                        "card {card} desc {desc} bottom {bottom}"
                    );
                }
            }
        }
    }
}
