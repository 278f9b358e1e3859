//! The query language: a string in, a [`Query`] out. `docs/QUERY-SYNTAX.md`
//! is the reference; in brief:
//!
//! ```text
//! query   := or EOF
//! or      := and (("OR" | <default OR>) and)*
//! and     := not (("AND" | <default AND>) not)*
//! not     := "NOT" not | ("+" | "-")? boosted
//! boosted := primary ("^" NUMBER)?
//! primary := "(" or ")" | FIELD ":" value | value
//! value   := "(" or ")" | WORD | WORD"*" | PHRASE ("~" N)? | range | "*"
//! range   := ("[" | "{") END "TO" END ("]" | "}")      END := WORD | PHRASE | "*"
//! ```
//!
//! Two clauses side by side are joined by the caller's default operator,
//! which binds like the explicit one (so with AND, `a b OR c` is
//! `(a AND b) OR c`). Every error is [`Error::QuerySyntax`] with the byte
//! position of the problem and what was expected there; parsing never
//! panics, nests at most [`MAX_DEPTH`] groups and `NOT`s, and gives
//! queries at most [`MAX_DEPTH`] levels deep.

use std::ops::Bound;

use crate::document::Value;
use crate::error::{Error, Result};
use crate::query::{Occur, Operator, Query};
use crate::schema::{FieldId, FieldType, Schema};

/// The deepest nesting of parentheses and `NOT`s a query may have, and the
/// deepest its parsed query may nest ([`Query::depth`]): the one limit of
/// every query ([`crate::query::limits`]).
pub use crate::query::limits::MAX_DEPTH;

/// What the caller chooses for a query string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParserConfig {
    /// The fields a clause without `field:` searches (a disjunction over
    /// them when there are several). Empty: every clause must name a field.
    pub default_fields: Vec<FieldId>,
    /// How clauses side by side combine (and the terms of a word the
    /// analyzer splits).
    pub default_op: Operator,
}

impl ParserConfig {
    /// One default field, and a default operator.
    pub fn new(field: FieldId, default_op: Operator) -> ParserConfig {
        ParserConfig {
            default_fields: vec![field],
            default_op,
        }
    }
}

/// Parses `text` into a query over `schema`'s fields.
///
/// Errors: [`Error::QuerySyntax`] naming the byte position and what was
/// expected, for malformed queries, unknown fields, values that do not fit
/// their field (e.g. `year:abc` on an i64 field) and unsupported syntax
/// (wildcards other than a trailing `*`, fuzzy `~` after a word).
pub fn parse(text: &str, schema: &Schema, config: &ParserConfig) -> Result<Query> {
    let tokens = lex(text)?;
    let mut p = Parser {
        tokens,
        at: 0,
        end: text.len(),
        schema,
        config,
        depth: 0,
    };
    if p.peek().is_none() {
        return Ok(Query::None);
    }
    let fields = config.default_fields.clone();
    let clause = p.or(&fields)?;
    if let Some(t) = p.peek() {
        return Err(syntax(
            t.pos,
            format!(
                "expected an operator or a clause, found {}",
                t.kind.describe()
            ),
        ));
    }
    let query = finish(clause).unwrap_or(Query::None);
    within_depth(&query, 0)?;
    Ok(query)
}

/// A syntax error at `pos` (where the group or query `q` starts) when `q`
/// nests deeper than [`MAX_DEPTH`]: groups of several clauses, boosts and
/// prohibited clauses each add a level, so fewer than [`MAX_DEPTH`] groups
/// can make a query too deep to search.
fn within_depth(q: &Query, pos: usize) -> Result<()> {
    let depth = q.depth();
    if depth > MAX_DEPTH {
        return Err(syntax(
            pos,
            format!(
                "the query from here nests {depth} levels deep; booleans and boosts nest \
                 at most {MAX_DEPTH} levels"
            ),
        ));
    }
    Ok(())
}

fn syntax(position: usize, message: impl Into<String>) -> Error {
    Error::QuerySyntax {
        position,
        message: message.into(),
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    /// A word with its escapes resolved; `plain` when it had none (only
    /// plain words are keywords); `star` when it ended in an unescaped `*`
    /// (not part of `text`).
    Word {
        text: String,
        plain: bool,
        star: bool,
    },
    /// A quoted phrase, escapes resolved.
    Phrase(String),
    Open,
    Close,
    Colon,
    Caret,
    Tilde,
    /// `[` (true) or `{`.
    RangeOpen(bool),
    /// `]` (true) or `}`.
    RangeClose(bool),
    Plus,
    Minus,
}

impl Kind {
    fn describe(&self) -> String {
        match self {
            Kind::Word { text, star, .. } => {
                format!("\"{}{}\"", text, if *star { "*" } else { "" })
            }
            Kind::Phrase(_) => "a quoted phrase".into(),
            Kind::Open => "'('".into(),
            Kind::Close => "')'".into(),
            Kind::Colon => "':'".into(),
            Kind::Caret => "'^'".into(),
            Kind::Tilde => "'~'".into(),
            Kind::RangeOpen(true) => "'['".into(),
            Kind::RangeOpen(false) => "'{'".into(),
            Kind::RangeClose(true) => "']'".into(),
            Kind::RangeClose(false) => "'}'".into(),
            Kind::Plus => "'+'".into(),
            Kind::Minus => "'-'".into(),
        }
    }

    fn is_keyword(&self, k: &str) -> bool {
        matches!(self, Kind::Word { text, plain: true, star: false } if text == k)
    }
}

#[derive(Clone, Debug)]
struct Token {
    kind: Kind,
    /// Byte offset of its first char.
    pos: usize,
    /// Byte offset past its last char.
    end: usize,
}

/// Characters that end a word (unless escaped).
fn is_special(c: char) -> bool {
    matches!(c, '(' | ')' | ':' | '^' | '"' | '[' | ']' | '{' | '}' | '~')
}

fn lex(text: &str) -> Result<Vec<Token>> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    // Whether the next char starts a clause (so `+`/`-` are modifiers).
    let mut at_start = true;
    while let Some(&(pos, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            at_start = true;
            continue;
        }
        let single = match c {
            '(' => Some(Kind::Open),
            ')' => Some(Kind::Close),
            ':' => Some(Kind::Colon),
            '^' => Some(Kind::Caret),
            '~' => Some(Kind::Tilde),
            '[' => Some(Kind::RangeOpen(true)),
            '{' => Some(Kind::RangeOpen(false)),
            ']' => Some(Kind::RangeClose(true)),
            '}' => Some(Kind::RangeClose(false)),
            '+' if at_start => Some(Kind::Plus),
            '-' if at_start => Some(Kind::Minus),
            _ => None,
        };
        if let Some(kind) = single {
            chars.next();
            at_start = matches!(kind, Kind::Open | Kind::Plus | Kind::Minus);
            out.push(Token {
                kind,
                pos,
                end: pos + 1,
            });
            continue;
        }
        at_start = false;
        if c == '"' {
            chars.next();
            let mut s = String::new();
            let end = loop {
                match chars.next() {
                    None => {
                        return Err(syntax(pos, "unterminated phrase: expected a closing '\"'"));
                    }
                    Some((i, '"')) => break i + 1,
                    Some((i, '\\')) => match chars.next() {
                        Some((_, e)) => s.push(e),
                        None => {
                            return Err(syntax(i, "expected a character after '\\'"));
                        }
                    },
                    Some((_, e)) => s.push(e),
                }
            };
            out.push(Token {
                kind: Kind::Phrase(s),
                pos,
                end,
            });
            continue;
        }
        let (mut s, mut plain, mut star, mut end) = (String::new(), true, false, pos);
        while let Some(&(i, c)) = chars.peek() {
            if c.is_whitespace() || is_special(c) {
                break;
            }
            chars.next();
            end = i + c.len_utf8();
            if star {
                return Err(syntax(
                    i - 1,
                    "'*' is only supported at the end of a word (a prefix); \
                     escape it as '\\*' to search for it",
                ));
            }
            match c {
                '\\' => match chars.next() {
                    Some((j, e)) => {
                        s.push(e);
                        plain = false;
                        end = j + e.len_utf8();
                    }
                    None => return Err(syntax(i, "expected a character after '\\'")),
                },
                '*' => star = true,
                '?' => {
                    return Err(syntax(
                        i,
                        "'?' wildcards are not supported; escape it as '\\?' to search for it",
                    ));
                }
                _ => s.push(c),
            }
        }
        out.push(Token {
            kind: Kind::Word {
                text: s,
                plain,
                star,
            },
            pos,
            end,
        });
    }
    Ok(out)
}

/// How a clause takes part in its group, before the group's operator is
/// known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mark {
    None,
    /// `+`: required.
    Plus,
    /// `-` or `NOT`: prohibited.
    Minus,
}

/// A parsed clause: its query (`None` when analysis left no term, so the
/// clause drops out) and its mark.
struct Clause {
    q: Option<Query>,
    mark: Mark,
}

/// A clause as a query of its own: a lone prohibited clause matches every
/// other document.
fn finish(c: Clause) -> Option<Query> {
    match c.mark {
        Mark::Minus => group(vec![c], Occur::Must),
        _ => c.q,
    }
}

/// Clauses combined: unmarked ones take `plain`, `+` ones `Must`, `-` ones
/// `MustNot`; clauses without a query drop out. A group of prohibited
/// clauses alone also matches every document (scoring 1.0), so that
/// `-a` means "everything but a".
fn group(clauses: Vec<Clause>, plain: Occur) -> Option<Query> {
    let mut out: Vec<(Occur, Query)> = Vec::with_capacity(clauses.len() + 1);
    for c in clauses {
        let Some(q) = c.q else { continue };
        let occur = match c.mark {
            Mark::None => plain,
            Mark::Plus => Occur::Must,
            Mark::Minus => Occur::MustNot,
        };
        out.push((occur, q));
    }
    if out.is_empty() {
        return None;
    }
    if out.iter().all(|(o, _)| *o == Occur::MustNot) {
        out.insert(0, (Occur::Must, Query::All));
    }
    if out.len() == 1 && matches!(out[0].0, Occur::Must | Occur::Should) {
        return out.pop().map(|(_, q)| q);
    }
    Some(Query::Boolean(out))
}

struct Parser<'a> {
    tokens: Vec<Token>,
    at: usize,
    end: usize,
    schema: &'a Schema,
    config: &'a ParserConfig,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += t.is_some() as usize;
        t
    }

    /// The position of the next token, or the end of the text.
    fn here(&self) -> usize {
        self.peek().map_or(self.end, |t| t.pos)
    }

    fn found(&self) -> String {
        self.peek()
            .map_or_else(|| "the end of the query".into(), |t| t.kind.describe())
    }

    fn keyword(&self, k: &str) -> bool {
        self.peek().is_some_and(|t| t.kind.is_keyword(k))
    }

    /// Whether the next token can start a clause.
    fn starts_clause(&self) -> bool {
        match self.peek().map(|t| &t.kind) {
            None | Some(Kind::Close) => false,
            Some(_) => !self.keyword("AND") && !self.keyword("OR"),
        }
    }

    /// One level deeper, for the `(` or `NOT` at `pos`.
    fn enter(&mut self, pos: usize) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(syntax(
                pos,
                format!("the query nests more than {MAX_DEPTH} groups or NOTs"),
            ));
        }
        Ok(())
    }

    fn or(&mut self, fields: &[FieldId]) -> Result<Clause> {
        self.list(fields, "OR", Operator::Or, Occur::Should, Self::and)
    }

    fn and(&mut self, fields: &[FieldId]) -> Result<Clause> {
        self.list(fields, "AND", Operator::And, Occur::Must, Self::not)
    }

    /// `item (sep item)*`, where clauses side by side count as `sep` when
    /// it is the default operator `op`; one clause stays as it is.
    fn list(
        &mut self,
        fields: &[FieldId],
        sep: &str,
        op: Operator,
        plain: Occur,
        item: fn(&mut Self, &[FieldId]) -> Result<Clause>,
    ) -> Result<Clause> {
        let mut clauses = vec![item(self, fields)?];
        loop {
            if self.keyword(sep) {
                self.next();
            } else if !(self.config.default_op == op && self.starts_clause()) {
                break;
            }
            clauses.push(item(self, fields)?);
        }
        if clauses.len() == 1 {
            return Ok(clauses.pop().expect("one clause"));
        }
        Ok(Clause {
            q: group(clauses, plain),
            mark: Mark::None,
        })
    }

    fn not(&mut self, fields: &[FieldId]) -> Result<Clause> {
        if self.keyword("NOT") {
            let not = self.next().expect("peeked");
            self.enter(not.pos)?;
            let inner = self.not(fields)?;
            self.depth -= 1;
            // NOT NOT a is a; NOT -a is a too.
            let mark = if inner.mark == Mark::Minus {
                Mark::None
            } else {
                Mark::Minus
            };
            return Ok(Clause { q: inner.q, mark });
        }
        let mark = match self.peek().map(|t| &t.kind) {
            Some(Kind::Plus) => Mark::Plus,
            Some(Kind::Minus) => Mark::Minus,
            _ => Mark::None,
        };
        if mark != Mark::None {
            self.next();
        }
        let q = self.boosted(fields)?;
        Ok(Clause { q, mark })
    }

    fn boosted(&mut self, fields: &[FieldId]) -> Result<Option<Query>> {
        let q = self.primary(fields)?;
        if !matches!(self.peek().map(|t| &t.kind), Some(Kind::Caret)) {
            return Ok(q);
        }
        let caret = self.next().expect("peeked");
        let boost = match self.next() {
            Some(Token {
                kind: Kind::Word {
                    text, star: false, ..
                },
                pos,
                ..
            }) if pos == caret.end => match text.parse::<f32>() {
                Ok(b) if b.is_finite() && b >= 0.0 => b,
                _ => {
                    return Err(syntax(
                        pos,
                        format!("expected a boost (a number >= 0) after '^', found \"{text}\""),
                    ));
                }
            },
            _ => {
                return Err(syntax(
                    caret.end,
                    "expected a boost (a number >= 0) right after '^'",
                ));
            }
        };
        Ok(q.map(|q| q.boost(boost)))
    }

    fn primary(&mut self, fields: &[FieldId]) -> Result<Option<Query>> {
        let Some(t) = self.peek().cloned() else {
            return Err(syntax(
                self.end,
                "expected a clause, found the end of the query",
            ));
        };
        // `field:` prefix.
        if let Kind::Word {
            text, star: false, ..
        } = &t.kind
            && let Some(Token {
                kind: Kind::Colon, ..
            }) = self.tokens.get(self.at + 1)
        {
            self.at += 2;
            let Some(id) = self.schema.field(text) else {
                return Err(syntax(
                    t.pos,
                    format!("expected a field name: the schema has no field \"{text}\""),
                ));
            };
            return self.value(&[id]);
        }
        // `*:*`, match-all.
        if let Kind::Word {
            text, star: true, ..
        } = &t.kind
            && text.is_empty()
            && let Some(Token {
                kind: Kind::Colon, ..
            }) = self.tokens.get(self.at + 1)
        {
            self.at += 2;
            match self.next() {
                Some(Token {
                    kind:
                        Kind::Word {
                            text, star: true, ..
                        },
                    ..
                }) if text.is_empty() => return Ok(Some(Query::All)),
                _ => return Err(syntax(t.pos, "expected '*:*' (every document)")),
            }
        }
        self.value(fields)
    }

    /// A value (or a group) searched in each of `fields`.
    fn value(&mut self, fields: &[FieldId]) -> Result<Option<Query>> {
        let Some(t) = self.next() else {
            return Err(syntax(self.end, "expected a term, phrase, range or '('"));
        };
        match t.kind {
            Kind::Open => {
                self.enter(t.pos)?;
                let inner = if matches!(self.peek().map(|t| &t.kind), Some(Kind::Close)) {
                    None
                } else {
                    finish(self.or(fields)?)
                };
                self.depth -= 1;
                if !matches!(self.peek().map(|x| &x.kind), Some(Kind::Close)) {
                    return Err(syntax(
                        self.here(),
                        format!(
                            "expected ')' to close the '(' at byte {}, found {}",
                            t.pos,
                            self.found()
                        ),
                    ));
                }
                self.next();
                if let Some(q) = &inner {
                    within_depth(q, t.pos)?;
                }
                Ok(inner)
            }
            Kind::Minus | Kind::Plus
                if matches!(self.peek(), Some(n) if n.pos == t.end
                    && matches!(n.kind, Kind::Word { .. })) =>
            {
                // A signed value right after `field:`, e.g. `year:-5`.
                let w = self.next().expect("peeked");
                let sign = if t.kind == Kind::Minus { "-" } else { "+" };
                let leaf = match w.kind {
                    Kind::Word { text, star, .. } => Leaf::Word(format!("{sign}{text}"), star),
                    _ => Leaf::Word(sign.to_owned(), false),
                };
                self.apply(leaf, t.pos, fields)
            }
            Kind::Word { text, star, .. } => {
                if star && text.is_empty() && fields == self.config.default_fields {
                    return Ok(Some(Query::All));
                }
                if matches!(self.peek().map(|x| &x.kind), Some(Kind::Tilde)) {
                    return Err(syntax(
                        self.here(),
                        "fuzzy queries ('~' after a word) are not supported; \
                         '~N' follows a quoted phrase",
                    ));
                }
                self.apply(Leaf::Word(text, star), t.pos, fields)
            }
            Kind::Phrase(text) => {
                let slop = self.slop()?;
                self.apply(Leaf::Phrase(text, slop), t.pos, fields)
            }
            Kind::RangeOpen(incl) => {
                let leaf = self.range(t.pos, incl)?;
                self.apply(leaf, t.pos, fields)
            }
            other => Err(syntax(
                t.pos,
                format!(
                    "expected a term, phrase, range or '(', found {}",
                    other.describe()
                ),
            )),
        }
    }

    /// `~N` after a phrase (0 without).
    fn slop(&mut self) -> Result<u32> {
        if !matches!(self.peek().map(|x| &x.kind), Some(Kind::Tilde)) {
            return Ok(0);
        }
        let tilde = self.next().expect("peeked");
        match self.next() {
            Some(Token {
                kind: Kind::Word {
                    text, star: false, ..
                },
                pos,
                ..
            }) if pos == tilde.end => text.parse::<u32>().map_err(|_| {
                syntax(
                    pos,
                    format!("expected a slop (a whole number) after '~', found \"{text}\""),
                )
            }),
            _ => Err(syntax(
                tilde.end,
                "expected a slop (a whole number) right after '~'",
            )),
        }
    }

    /// A word, phrase or range (at `pos`) in each of `fields` (a
    /// disjunction when there are several).
    fn apply(&self, leaf: Leaf, pos: usize, fields: &[FieldId]) -> Result<Option<Query>> {
        if fields.is_empty() {
            return Err(syntax(
                pos,
                "expected 'field:' before the term: no default field is set",
            ));
        }
        let mut out = Vec::new();
        for &f in fields {
            if let Some(q) = self.in_field(&leaf, f, pos)? {
                out.push((Occur::Should, q));
            }
        }
        Ok(match out.len() {
            0 => None,
            1 => out.pop().map(|(_, q)| q),
            _ => Some(Query::Boolean(out)),
        })
    }

    /// `[a TO b]`, `{a TO b}` or mixed, after the opening bracket.
    fn range(&mut self, open: usize, lower_incl: bool) -> Result<Leaf> {
        let lower = self.range_end()?;
        if !self.keyword("TO") {
            return Err(syntax(
                self.here(),
                format!("expected 'TO' in the range, found {}", self.found()),
            ));
        }
        self.next();
        let upper = self.range_end()?;
        let upper_incl = match self.peek().map(|x| &x.kind) {
            Some(&Kind::RangeClose(i)) => i,
            _ => {
                return Err(syntax(
                    self.here(),
                    format!(
                        "expected ']' or '}}' to close the range opened at byte {open}, found {}",
                        self.found()
                    ),
                ));
            }
        };
        self.next();
        let bound = |end: Option<(String, usize)>, incl: bool| match end {
            None => Bound::Unbounded,
            Some(v) if incl => Bound::Included(v),
            Some(v) => Bound::Excluded(v),
        };
        Ok(Leaf::Range(
            bound(lower, lower_incl),
            bound(upper, upper_incl),
        ))
    }

    /// One end of a range: a word, a phrase, a signed word, or `*` (open).
    fn range_end(&mut self) -> Result<Option<(String, usize)>> {
        let Some(t) = self.next() else {
            return Err(syntax(self.end, "expected a range end (a value or '*')"));
        };
        match t.kind {
            Kind::Word {
                text, star: true, ..
            } if text.is_empty() => Ok(None),
            Kind::Word {
                text, star: false, ..
            } => Ok(Some((text, t.pos))),
            Kind::Phrase(text) => Ok(Some((text, t.pos))),
            Kind::Minus | Kind::Plus => match self.next() {
                Some(Token {
                    kind:
                        Kind::Word {
                            text, star: false, ..
                        },
                    pos,
                    ..
                }) if pos == t.end => {
                    let sign = if t.kind == Kind::Minus { "-" } else { "+" };
                    Ok(Some((format!("{sign}{text}"), t.pos)))
                }
                _ => Err(syntax(t.end, "expected a number right after the sign")),
            },
            other => Err(syntax(
                t.pos,
                format!(
                    "expected a range end (a value or '*'), found {}",
                    other.describe()
                ),
            )),
        }
    }

    /// A leaf in field `f`, or `None` when analysis leaves no term.
    fn in_field(&self, leaf: &Leaf, f: FieldId, pos: usize) -> Result<Option<Query>> {
        let def = self.schema.def(f);
        let ty = def.ty;
        let name = &def.name;
        let number = |text: &str, pos: usize| -> Result<Value> {
            match ty {
                FieldType::I64 => text.parse::<i64>().map(Value::I64).map_err(|_| {
                    syntax(
                        pos,
                        format!(
                            "expected an integer for the i64 field \"{name}\", found \"{text}\""
                        ),
                    )
                }),
                _ => match text.parse::<f64>() {
                    Ok(x) if !x.is_nan() => Ok(Value::F64(x)),
                    _ => Err(syntax(
                        pos,
                        format!("expected a number for the f64 field \"{name}\", found \"{text}\""),
                    )),
                },
            }
        };
        // One value of a non-text field: a term when indexed, else an
        // exact range over the sort column.
        let exact = |v: Value| match (&v, def.flags.indexed) {
            (Value::I64(x), true) => Query::term_i64(f, *x),
            (Value::Str(s), true) => Query::term(f, s),
            _ => Query::range(f, Bound::Included(v.clone()), Bound::Included(v)),
        };
        let value = |text: &str, pos: usize| -> Result<Value> {
            match ty {
                FieldType::I64 | FieldType::F64 => number(text, pos),
                _ => Ok(Value::Str(text.to_owned())),
            }
        };
        Ok(match leaf {
            Leaf::Word(text, true) => match ty {
                FieldType::Text => Some(Query::prefix(f, &def.analyzer.normalize_prefix(text))),
                FieldType::String => Some(Query::prefix(f, text)),
                _ => {
                    return Err(syntax(
                        pos,
                        format!(
                            "prefix queries need a text or string field; \"{name}\" is {}",
                            ty.name()
                        ),
                    ));
                }
            },
            Leaf::Word(text, false) | Leaf::Phrase(text, 0) if ty != FieldType::Text => {
                Some(exact(value(text, pos)?))
            }
            Leaf::Phrase(_, _) if ty != FieldType::Text => {
                return Err(syntax(
                    pos,
                    format!("a slop needs a text field; \"{name}\" is {}", ty.name()),
                ));
            }
            Leaf::Word(text, false) => {
                let tokens = def.analyzer.tokens(text);
                let occur = match self.config.default_op {
                    Operator::And => Occur::Must,
                    Operator::Or => Occur::Should,
                };
                match tokens.len() {
                    0 => None,
                    1 => Some(Query::term(f, &tokens[0])),
                    _ => Some(Query::Boolean(
                        tokens.iter().map(|t| (occur, Query::term(f, t))).collect(),
                    )),
                }
            }
            Leaf::Phrase(text, slop) => {
                let tokens = def.analyzer.tokens(text);
                match tokens.len() {
                    0 => None,
                    1 => Some(Query::term(f, &tokens[0])),
                    _ => Some(Query::Phrase {
                        field: f,
                        text: text.clone(),
                        slop: *slop,
                    }),
                }
            }
            Leaf::Range(lower, upper) => {
                if ty == FieldType::Text {
                    return Err(syntax(
                        pos,
                        format!(
                            "range queries need an i64, f64 or string field; \"{name}\" is text"
                        ),
                    ));
                }
                let end = |b: &Bound<(String, usize)>| -> Result<Bound<Value>> {
                    Ok(match b {
                        Bound::Unbounded => Bound::Unbounded,
                        Bound::Included((t, p)) => Bound::Included(value(t, *p)?),
                        Bound::Excluded((t, p)) => Bound::Excluded(value(t, *p)?),
                    })
                };
                Some(Query::range(f, end(lower)?, end(upper)?))
            }
        })
    }
}

/// A value read from the query, before it is applied to a field.
enum Leaf {
    /// A word, and whether it ended in `*` (a prefix).
    Word(String, bool),
    /// A quoted phrase and its slop.
    Phrase(String, u32),
    /// A range's ends, each with its position.
    Range(Bound<(String, usize)>, Bound<(String, usize)>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FieldFlags;

    struct F {
        schema: Schema,
        body: FieldId,
        title: FieldId,
        tag: FieldId,
        year: FieldId,
        price: FieldId,
        n: FieldId,
    }

    fn fields() -> F {
        let mut schema = Schema::new();
        let mut add = |name, ty, indexed, sortable| {
            let flags = FieldFlags {
                stored: false,
                indexed,
                sortable,
            };
            schema.add_field(name, ty, flags).unwrap()
        };
        let body = add("body", FieldType::Text, true, false);
        let title = add("title", FieldType::Text, true, false);
        let tag = add("tag", FieldType::String, true, true);
        let year = add("year", FieldType::I64, true, true);
        let price = add("price", FieldType::F64, false, true);
        let n = add("n", FieldType::I64, false, true);
        F {
            schema,
            body,
            title,
            tag,
            year,
            price,
            n,
        }
    }

    fn bool_of(clauses: Vec<(Occur, Query)>) -> Query {
        Query::Boolean(clauses)
    }

    #[test]
    fn concrete_queries_parse_to_their_query() {
        use Bound::*;
        use Occur::*;
        let f = fields();
        let t = |s: &str| Query::term(f.body, s);
        let tt = |s: &str| Query::term(f.title, s);
        let or = ParserConfig::new(f.body, Operator::Or);
        let and = ParserConfig::new(f.body, Operator::And);
        let both = ParserConfig {
            default_fields: vec![f.title, f.body],
            default_op: Operator::Or,
        };
        let cases: Vec<(&str, &ParserConfig, Query)> = vec![
            ("foo", &or, t("foo")),
            (
                "Foo BAR",
                &or,
                bool_of(vec![(Should, t("foo")), (Should, t("bar"))]),
            ),
            (
                "foo bar",
                &and,
                bool_of(vec![(Must, t("foo")), (Must, t("bar"))]),
            ),
            (
                "a AND b",
                &or,
                bool_of(vec![(Must, t("a")), (Must, t("b"))]),
            ),
            (
                "a OR b",
                &and,
                bool_of(vec![(Should, t("a")), (Should, t("b"))]),
            ),
            (
                "a b OR c",
                &and,
                bool_of(vec![
                    (Should, bool_of(vec![(Must, t("a")), (Must, t("b"))])),
                    (Should, t("c")),
                ]),
            ),
            (
                "a OR b AND c",
                &or,
                bool_of(vec![
                    (Should, t("a")),
                    (Should, bool_of(vec![(Must, t("b")), (Must, t("c"))])),
                ]),
            ),
            (
                "NOT a AND b",
                &or,
                bool_of(vec![(MustNot, t("a")), (Must, t("b"))]),
            ),
            (
                "(a OR b) AND c",
                &or,
                bool_of(vec![
                    (Must, bool_of(vec![(Should, t("a")), (Should, t("b"))])),
                    (Must, t("c")),
                ]),
            ),
            (
                "+a -b c",
                &or,
                bool_of(vec![(Must, t("a")), (MustNot, t("b")), (Should, t("c"))]),
            ),
            (
                "-a",
                &or,
                bool_of(vec![(Must, Query::All), (MustNot, t("a"))]),
            ),
            (
                "NOT a",
                &and,
                bool_of(vec![(Must, Query::All), (MustNot, t("a"))]),
            ),
            ("NOT NOT a", &or, t("a")),
            ("+a", &or, t("a")),
            ("title:Foo", &or, tt("foo")),
            (
                "title:(a b)",
                &or,
                bool_of(vec![(Should, tt("a")), (Should, tt("b"))]),
            ),
            (
                "title:(a body:b)",
                &and,
                bool_of(vec![(Must, tt("a")), (Must, t("b"))]),
            ),
            (
                "\"Quick fox\"~2",
                &or,
                Query::Phrase {
                    field: f.body,
                    text: "Quick fox".into(),
                    slop: 2,
                },
            ),
            (
                "title:\"quick  fox\"",
                &or,
                Query::Phrase {
                    field: f.title,
                    text: "quick  fox".into(),
                    slop: 0,
                },
            ),
            ("\"one\"", &or, t("one")),
            ("tag:\"New York\"", &or, Query::term(f.tag, "New York")),
            ("tag:Red", &or, Query::term(f.tag, "Red")),
            (
                "year:[2000 TO 2005}",
                &or,
                Query::range(
                    f.year,
                    Included(Value::I64(2000)),
                    Excluded(Value::I64(2005)),
                ),
            ),
            (
                "year:{-5 TO *]",
                &or,
                Query::range(f.year, Excluded(Value::I64(-5)), Unbounded),
            ),
            (
                "price:{* TO 3.5]",
                &or,
                Query::range(f.price, Unbounded, Included(Value::F64(3.5))),
            ),
            (
                "tag:[a TO \"m z\"]",
                &or,
                Query::range(
                    f.tag,
                    Included(Value::Str("a".into())),
                    Included(Value::Str("m z".into())),
                ),
            ),
            ("year:-5", &or, Query::term_i64(f.year, -5)),
            (
                "n:7",
                &or,
                Query::range(f.n, Included(Value::I64(7)), Included(Value::I64(7))),
            ),
            (
                "price:2.5",
                &or,
                Query::range(
                    f.price,
                    Included(Value::F64(2.5)),
                    Included(Value::F64(2.5)),
                ),
            ),
            ("QU*", &or, Query::prefix(f.body, "qu")),
            ("tag:Ne*", &or, Query::prefix(f.tag, "Ne")),
            ("foo^2.5", &or, t("foo").boost(2.5)),
            ("title:foo^0", &or, tt("foo").boost(0.0)),
            (
                "(a b)^2",
                &or,
                bool_of(vec![(Should, t("a")), (Should, t("b"))]).boost(2.0),
            ),
            (
                "a\\:b",
                &or,
                bool_of(vec![(Should, t("a")), (Should, t("b"))]),
            ),
            ("tag:a\\:b\\*", &or, Query::term(f.tag, "a:b*")),
            (
                "wi-fi",
                &and,
                bool_of(vec![(Must, t("wi")), (Must, t("fi"))]),
            ),
            ("*:*", &or, Query::All),
            ("*", &or, Query::All),
            ("", &or, Query::None),
            ("  !!! ", &or, Query::None),
            ("a !!!", &and, t("a")),
            (
                "foo",
                &both,
                bool_of(vec![(Should, tt("foo")), (Should, t("foo"))]),
            ),
        ];
        for (text, config, want) in cases {
            let got = parse(text, &f.schema, config);
            assert_eq!(got.ok().as_ref(), Some(&want), "{text:?}");
        }
    }

    #[test]
    fn malformed_queries_name_their_position() {
        let f = fields();
        let or = ParserConfig::new(f.body, Operator::Or);
        let none = ParserConfig {
            default_fields: vec![],
            default_op: Operator::Or,
        };
        let cases: &[(&str, &ParserConfig, usize, &str)] = &[
            ("(a", &or, 2, "expected ')'"),
            ("a)", &or, 1, "expected an operator or a clause"),
            ("\"abc", &or, 0, "unterminated phrase"),
            ("year:abc", &or, 5, "expected an integer"),
            ("price:[1 TO x]", &or, 12, "expected a number"),
            ("nofield:x", &or, 0, "no field \"nofield\""),
            ("[a TO b]", &or, 0, "range queries need"),
            ("year:[1 TO", &or, 10, "expected a range end"),
            ("year:[1 2]", &or, 8, "expected 'TO'"),
            ("year:[1 TO 2", &or, 12, "expected ']' or '}'"),
            ("foo^", &or, 4, "expected a boost"),
            ("foo^x", &or, 4, "expected a boost"),
            ("foo^-1", &or, 4, "expected a boost"),
            ("a AND", &or, 5, "expected a clause"),
            ("te?t", &or, 2, "'?' wildcards"),
            ("a*b", &or, 1, "'*' is only supported at the end"),
            ("foo~2", &or, 3, "fuzzy queries"),
            ("\"a b\"~x", &or, 6, "expected a slop"),
            ("title:", &or, 6, "expected a term"),
            ("year:x*", &or, 5, "prefix queries need"),
            ("a\\", &or, 1, "expected a character after"),
            ("foo", &none, 0, "no default field"),
            (":", &or, 0, "expected a term"),
        ];
        for &(text, config, pos, what) in cases {
            match parse(text, &f.schema, config) {
                Err(Error::QuerySyntax { position, message }) => {
                    assert_eq!(position, pos, "{text:?}: {message}");
                    assert!(message.contains(what), "{text:?}: {message}");
                }
                other => panic!("{text:?} gave {other:?}"),
            }
        }
        let deep = "(".repeat(10_000) + "a" + &")".repeat(10_000);
        let err = parse(&deep, &f.schema, &or).unwrap_err();
        assert!(
            matches!(err, Error::QuerySyntax { position: 64, .. }),
            "{err}"
        );
        let nots = "NOT ".repeat(10_000) + "a";
        assert!(matches!(
            parse(&nots, &f.schema, &or),
            Err(Error::QuerySyntax { .. })
        ));
    }

    proptest::proptest! {
        /// Any string parses or gives a positioned syntax error (within
        /// the string), never a panic.
        #[test]
        fn random_strings_parse_or_give_a_positioned_error(
            text in proptest::string::string_regex(
                "([ a-zA-Z0-9():^\"\\[\\]{}~*?+\\-\\\\]|AND|OR|NOT|TO|body:|year:|price:|tag:|é|\u{0}){0,40}"
            ).unwrap(),
            chars in ".{0,30}",
            and in proptest::prelude::any::<bool>(),
        ) {
            let f = fields();
            let op = if and { Operator::And } else { Operator::Or };
            let config = ParserConfig::new(f.body, op);
            for t in [&text, &chars] {
                match parse(t, &f.schema, &config) {
                    Ok(_) => {}
                    Err(Error::QuerySyntax { position, .. }) => {
                        proptest::prop_assert!(position <= t.len(), "{t:?} at {position}");
                    }
                    Err(e) => proptest::prop_assert!(false, "{t:?}: {e}"),
                }
            }
        }

        /// Random bytes, as any caller may pass them, read as UTF-8 when
        /// they are.
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
            let f = fields();
            if let Ok(t) = std::str::from_utf8(&bytes) {
                let r = parse(t, &f.schema, &ParserConfig::new(f.body, Operator::And));
                let positioned = match r {
                    Ok(_) => true,
                    Err(Error::QuerySyntax { position, .. }) => position <= t.len(),
                    Err(_) => false,
                };
                proptest::prop_assert!(positioned, "{:?}", t);
            }
        }
    }
}
