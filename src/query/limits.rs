//! The limits every query keeps to, so that no query, however it was
//! built, can crash its host or give meaningless scores.
//!
//! - **Depth.** Compiling a query and every execution path recurse over
//!   its nesting, and a stack overflow cannot be caught (the C API's panic
//!   boundary never sees it). [`Query::depth`] counts the nesting without
//!   recursion; the compiler refuses a query deeper than [`MAX_DEPTH`] (the
//!   parser's limit too) before it recurses, and the C API refuses to build
//!   one. A [`Query`] value itself may be of any depth (its variants are
//!   public): it is dropped, cloned and compared without recursion, and its
//!   `Debug` form shows its first [`MAX_DEPTH`] levels.
//! - **Scores.** Boosts multiply into weights and constants, and a
//!   boolean sums its clauses' scores in f32: a large enough boost (or
//!   product of nested boosts, or sum) would make a weight infinite and
//!   every score NaN. The compiler refuses a plan any of whose weights,
//!   constants or clause sums could be beyond the largest f32
//!   ([`check_scores`]); it never changes how a score is computed.

use std::fmt;

use crate::error::{Error, Result};
use crate::query::plan::Node;
use crate::query::{Occur, Query};

/// The deepest a query may nest: at most this many levels, counted as
/// [`Query::depth`] counts them, so at most `MAX_DEPTH - 1` booleans and
/// boosts around a leaf. The query parser also nests at most this many
/// groups and `NOT`s.
pub const MAX_DEPTH: usize = 64;

impl Query {
    /// [`MAX_DEPTH`], where the C API and other users of `Query` find it.
    pub const MAX_DEPTH: usize = MAX_DEPTH;

    /// How many levels the query nests: 1 for a query without clauses (a
    /// term, match, phrase, prefix, range, match-all or match-none query,
    /// or a boolean without clauses); for a boolean, 1 more than its
    /// deepest clause; for a boost, 1 more than its inner query. Computed
    /// without recursion, so a query of any depth can be measured.
    /// Searching a query deeper than [`MAX_DEPTH`] is
    /// [`Error::InvalidArgument`].
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut pending = vec![(self, 1)];
        while let Some((q, level)) = pending.pop() {
            deepest = deepest.max(level);
            match q {
                Query::Boolean(clauses) => {
                    pending.extend(clauses.iter().map(|(_, c)| (c, level + 1)))
                }
                Query::Boost(inner, _) => pending.push((inner, level + 1)),
                _ => {}
            }
        }
        deepest
    }
}

/// [`Error::InvalidArgument`] when `query` nests deeper than
/// [`MAX_DEPTH`]: what a compiler checks before it recurses.
pub(crate) fn check_depth(query: &Query) -> Result<()> {
    let depth = query.depth();
    if depth > MAX_DEPTH {
        return Err(Error::InvalidArgument(format!(
            "the query nests {depth} levels deep; booleans and boosts nest at most \
             {MAX_DEPTH} levels"
        )));
    }
    Ok(())
}

/// [`Error::InvalidArgument`] when a score of the compiled `node` could be
/// beyond the largest f32 (infinite, or NaN from infinity less infinity):
/// a term's or phrase's weight (a BM25 score is at most its weight), a
/// constant score, or a boolean's sum of its scoring clauses' best scores.
/// The sum is taken in f32 in clause order, as every path sums scores, and
/// f32 addition is monotone, so it bounds every sum a search computes and
/// every pruning bound (which sum at most those best scores). Recurses
/// over the plan, which [`check_depth`] has bounded.
pub(crate) fn check_scores(node: &Node) -> Result<()> {
    best_score(node).map(|_| ())
}

/// The largest score `node` can give, or the error when it, or a weight
/// below it, is not finite.
fn best_score(node: &Node) -> Result<f32> {
    let (what, best) = match node {
        Node::Empty => return Ok(0.0),
        Node::Term(t) => ("a term's weight", t.weight.weight),
        Node::Phrase(p) => {
            for t in &p.terms {
                finite("a term's weight", t.weight.weight)?;
            }
            ("a phrase's weight", p.weight.weight)
        }
        Node::All(score) => ("a constant score", *score),
        Node::Range(r) => ("a constant score", r.score),
        Node::Terms(t) => ("a constant score", t.score),
        Node::Bool(clauses) => {
            let mut sum = 0.0f32;
            for (occur, clause) in clauses {
                let best = best_score(clause)?;
                if matches!(occur, Occur::Must | Occur::Should) {
                    sum += best;
                }
            }
            ("a boolean's sum of clause scores", sum)
        }
    };
    finite(what, best)
}

fn finite(what: &str, score: f32) -> Result<f32> {
    if score.is_finite() {
        return Ok(score);
    }
    Err(Error::InvalidArgument(format!(
        "the boosts make {what} {score}, beyond the largest f32 ({:e}); \
         scores and their sums must stay finite",
        f32::MAX
    )))
}

/// Moves the queries `q` holds into `into`, leaving it none.
fn detach(q: &mut Query, into: &mut Vec<Query>) {
    match q {
        Query::Boolean(clauses) => into.extend(clauses.drain(..).map(|(_, c)| c)),
        Query::Boost(inner, _) => into.push(std::mem::replace(&mut **inner, Query::None)),
        _ => {}
    }
}

/// Without recursion: a query of any depth drops in constant stack.
impl Drop for Query {
    fn drop(&mut self) {
        if !matches!(self, Query::Boolean(_) | Query::Boost(..)) {
            return;
        }
        let mut pending = Vec::new();
        detach(self, &mut pending);
        while let Some(mut q) = pending.pop() {
            // `q` is left without clauses, so its own drop returns at once.
            detach(&mut q, &mut pending);
        }
    }
}

/// A query without clauses, copied.
fn copy_leaf(q: &Query) -> Query {
    match q {
        Query::Term { field, key } => Query::Term {
            field: *field,
            key: key.clone(),
        },
        Query::Match { field, text, op } => Query::Match {
            field: *field,
            text: text.clone(),
            op: *op,
        },
        Query::Prefix { field, prefix } => Query::Prefix {
            field: *field,
            prefix: prefix.clone(),
        },
        Query::Range {
            field,
            lower,
            upper,
        } => Query::Range {
            field: *field,
            lower: lower.clone(),
            upper: upper.clone(),
        },
        Query::All => Query::All,
        Query::None => Query::None,
        Query::Phrase { field, text, slop } => Query::Phrase {
            field: *field,
            text: text.clone(),
            slop: *slop,
        },
        Query::Boolean(_) | Query::Boost(..) => unreachable!("a query with clauses"),
    }
}

/// Without recursion: copies are made leaves first, then joined.
impl Clone for Query {
    fn clone(&self) -> Query {
        enum Step<'a> {
            /// Copy this query (its clauses first).
            Copy(&'a Query),
            /// Join this query's copied clauses, the last ones made.
            Join(&'a Query),
        }
        let mut steps = vec![Step::Copy(self)];
        let mut made: Vec<Query> = Vec::new();
        while let Some(step) = steps.pop() {
            match step {
                Step::Copy(q @ Query::Boolean(clauses)) => {
                    steps.push(Step::Join(q));
                    steps.extend(clauses.iter().rev().map(|(_, c)| Step::Copy(c)));
                }
                Step::Copy(q @ Query::Boost(inner, _)) => {
                    steps.push(Step::Join(q));
                    steps.push(Step::Copy(inner));
                }
                Step::Copy(leaf) => made.push(copy_leaf(leaf)),
                Step::Join(Query::Boolean(clauses)) => {
                    let copies = made.split_off(made.len() - clauses.len());
                    let occurs = clauses.iter().map(|(o, _)| *o);
                    made.push(Query::Boolean(occurs.zip(copies).collect()));
                }
                Step::Join(Query::Boost(_, b)) => {
                    let inner = made.pop().expect("the inner query's copy");
                    made.push(Query::Boost(Box::new(inner), *b));
                }
                Step::Join(_) => unreachable!("only queries with clauses are joined"),
            }
        }
        made.pop().expect("the copy")
    }
}

/// Without recursion: pairs of queries still to compare wait on a list.
impl PartialEq for Query {
    fn eq(&self, other: &Query) -> bool {
        let mut pending = vec![(self, other)];
        while let Some((a, b)) = pending.pop() {
            let same = match (a, b) {
                (Query::Boolean(x), Query::Boolean(y)) => {
                    if x.len() != y.len() {
                        return false;
                    }
                    for ((ox, qx), (oy, qy)) in x.iter().zip(y) {
                        if ox != oy {
                            return false;
                        }
                        pending.push((qx, qy));
                    }
                    true
                }
                (Query::Boost(x, bx), Query::Boost(y, by)) => {
                    pending.push((x, y));
                    bx == by
                }
                (Query::Term { field, key }, Query::Term { field: f, key: k }) => {
                    field == f && key == k
                }
                (
                    Query::Match { field, text, op },
                    Query::Match {
                        field: f,
                        text: t,
                        op: o,
                    },
                ) => field == f && text == t && op == o,
                (
                    Query::Prefix { field, prefix },
                    Query::Prefix {
                        field: f,
                        prefix: p,
                    },
                ) => field == f && prefix == p,
                (
                    Query::Range {
                        field,
                        lower,
                        upper,
                    },
                    Query::Range {
                        field: f,
                        lower: l,
                        upper: u,
                    },
                ) => field == f && lower == l && upper == u,
                (Query::All, Query::All) | (Query::None, Query::None) => true,
                (
                    Query::Phrase { field, text, slop },
                    Query::Phrase {
                        field: f,
                        text: t,
                        slop: s,
                    },
                ) => field == f && text == t && slop == s,
                _ => false,
            };
            if !same {
                return false;
            }
        }
        true
    }
}

/// As `#[derive(Debug)]` would show it, down to [`MAX_DEPTH`] levels;
/// deeper clauses show as `..`.
impl fmt::Debug for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Levels(self, MAX_DEPTH).fmt(f)
    }
}

/// A query shown down to `.1` more levels.
struct Levels<'a>(&'a Query, usize);

/// A boolean's clauses shown down to `.1` more levels.
struct Clauses<'a>(&'a [(Occur, Query)], usize);

impl fmt::Debug for Clauses<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(o, q)| (o, Levels(q, self.1))))
            .finish()
    }
}

impl fmt::Debug for Levels<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Levels(q, levels) = *self;
        if levels == 0 {
            return f.write_str("..");
        }
        match q {
            Query::Term { field, key } => f
                .debug_struct("Term")
                .field("field", field)
                .field("key", key)
                .finish(),
            Query::Match { field, text, op } => f
                .debug_struct("Match")
                .field("field", field)
                .field("text", text)
                .field("op", op)
                .finish(),
            Query::Boolean(clauses) => f
                .debug_tuple("Boolean")
                .field(&Clauses(clauses, levels - 1))
                .finish(),
            Query::Prefix { field, prefix } => f
                .debug_struct("Prefix")
                .field("field", field)
                .field("prefix", prefix)
                .finish(),
            Query::Range {
                field,
                lower,
                upper,
            } => f
                .debug_struct("Range")
                .field("field", field)
                .field("lower", lower)
                .field("upper", upper)
                .finish(),
            Query::All => f.write_str("All"),
            Query::None => f.write_str("None"),
            Query::Boost(inner, b) => f
                .debug_tuple("Boost")
                .field(&Levels(inner, levels - 1))
                .field(b)
                .finish(),
            Query::Phrase { field, text, slop } => f
                .debug_struct("Phrase")
                .field("field", field)
                .field("text", text)
                .field("slop", slop)
                .finish(),
        }
    }
}
