//! Static checks at parse time: an operator applied to operands whose types can never satisfy
//! it is an error (values are never converted, so it would be silently false), date literals
//! compared with `now` are converted, and `matches` patterns are compiled.

use super::super::glob::Glob;
use super::ast::{CmpOp, Fact, Lit, Node, Operand};
use super::lex::Token;
use super::{time, ConditionError};

/// What an operand is known to hold; `Any` for `identity.*` and `args.*` (JSON values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ty {
    Str,
    Num,
    Bool,
    Null,
    List,
    Time,
    Any,
}

impl Ty {
    pub(super) fn of_lit(lit: &Lit) -> Ty {
        match lit {
            Lit::Null => Ty::Null,
            Lit::Bool(_) => Ty::Bool,
            Lit::Num(_) => Ty::Num,
            Lit::Str(_) => Ty::Str,
            Lit::Time(_) => Ty::Time,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Ty::Str => "a string",
            Ty::Num => "a number",
            Ty::Bool => "a boolean",
            Ty::Null => "null",
            Ty::List => "a list",
            Ty::Time => "a time",
            Ty::Any => "a value",
        }
    }

    /// Whether values of these types can ever be equal or ordered.
    fn meets(self, other: Ty) -> bool {
        self == Ty::Any || other == Ty::Any || self == other || matches!((self, other), (Ty::Time, Ty::Num) | (Ty::Num, Ty::Time))
    }
}

/// A parsed operand with where it starts and its source text, for messages.
pub(super) struct Opd {
    pub val: Operand,
    pub ty: Ty,
    pub line: usize,
    pub col: usize,
    pub text: Box<str>,
}

impl Opd {
    fn err(&self, message: impl Into<String>) -> ConditionError {
        ConditionError { line: self.line, column: self.col, message: message.into() }
    }

    fn is_lit(&self) -> bool {
        matches!(self.val, Operand::Lit(_) | Operand::List(_))
    }

    /// "`purpose` is a string".
    fn is_a(&self) -> String {
        format!("`{}` is {}", self.text, self.ty.describe())
    }

    /// A date literal on the other side of `now` becomes a time.
    fn date_to_time(&mut self) -> Result<(), ConditionError> {
        if let Operand::Lit(Lit::Str(s)) = &self.val {
            let ms = time::parse_rfc3339(s).map_err(|e| self.err(format!("`{}` is not an RFC 3339 date: {e}", self.text)))?;
            self.val = Operand::Lit(Lit::Time(ms));
            self.ty = Ty::Time;
        }
        Ok(())
    }
}

fn both_literals(op: &Token, src: &str, a: &Opd, b: &Opd) -> ConditionError {
    let named = [a, b].into_iter().find_map(|o| match &o.val {
        Operand::Lit(Lit::Str(s)) if super::ast::is_root(s) => Some(s.clone()),
        _ => None,
    });
    let hint = named.map(|n| format!(" (write the name {n} without quotes)")).unwrap_or_default();
    op.err(format!("both sides of `{}` are literals; one side must be a name{hint}", &src[op.start..op.end]))
}

fn list_side(o: &Opd) -> ConditionError {
    match o.val {
        Operand::Fact(Fact::Roles) => o.err("`roles` is a list: write `roles has '…'` or `'…' in roles`"),
        Operand::List(_) => o.err("a list literal can only be the right side of `in`"),
        _ => o.err(format!("{}: use `in` or `has`", o.is_a())),
    }
}

/// `lhs op rhs` for `==`, `!=`, `<`, `<=`, `>`, `>=`.
pub(super) fn compare(src: &str, op: CmpOp, at: &Token, mut lhs: Opd, mut rhs: Opd) -> Result<Node, ConditionError> {
    if lhs.is_lit() && rhs.is_lit() {
        return Err(both_literals(at, src, &lhs, &rhs));
    }
    for side in [&lhs, &rhs] {
        if side.ty == Ty::List {
            return Err(list_side(side));
        }
    }
    if lhs.ty == Ty::Time {
        rhs.date_to_time()?;
    }
    if rhs.ty == Ty::Time {
        lhs.date_to_time()?;
    }
    let sym = op.symbol();
    if !matches!(op, CmpOp::Eq | CmpOp::Ne) {
        if let Some(side) = [&lhs, &rhs].into_iter().find(|o| matches!(o.ty, Ty::Bool | Ty::Null)) {
            return Err(at.err(format!("`{sym}` orders numbers, strings and times; {}", side.is_a())));
        }
    }
    let null_test = matches!(op, CmpOp::Eq | CmpOp::Ne) && (lhs.ty == Ty::Null || rhs.ty == Ty::Null);
    if !null_test && !lhs.ty.meets(rhs.ty) {
        return Err(at.err(format!("{} and {}: `{sym}` between them is never true (values are never converted)", lhs.is_a(), rhs.is_a())));
    }
    Ok(Node::Cmp(op, lhs.val, rhs.val))
}

/// `elem in list` (and `list has elem`, operands swapped by the caller).
pub(super) fn member(src: &str, at: &Token, elem: Opd, list: Opd) -> Result<Node, ConditionError> {
    let op = &src[at.start..at.end];
    if elem.is_lit() && list.is_lit() {
        return Err(both_literals(at, src, &elem, &list));
    }
    if !matches!(list.ty, Ty::List | Ty::Any) {
        let side = if op == "in" { "right" } else { "left" };
        return Err(list.err(format!(
            "the {side} side of `{op}` must be a list (a list literal, `roles`, or a list in \
             identity.* or args.*); {}",
            list.is_a()
        )));
    }
    match elem.ty {
        Ty::List => return Err(list_side(&elem)),
        Ty::Time => return Err(elem.err("`now` can only be compared (`<`, `>=`, …); with `in` use now.hour, now.minute or now.weekday")),
        _ => {}
    }
    if let Operand::List(items) = &list.val {
        if !items.is_empty() && !items.iter().any(|l| elem.ty.meets(Ty::of_lit(l))) {
            return Err(at.err(format!("{} but no value in the list is: `{op}` is never true (values are never converted)", elem.is_a())));
        }
    }
    Ok(Node::In(elem.val, list.val))
}

/// `lhs matches 'glob'`; `pat` is the string token, `pattern` its value.
pub(super) fn matches(lhs: Opd, pat: &Token, pattern: &str, src: &str) -> Result<Node, ConditionError> {
    if lhs.is_lit() {
        return Err(lhs.err("the left side of `matches` must be a name"));
    }
    if !matches!(lhs.ty, Ty::Str | Ty::Any) {
        return Err(lhs.err(format!("`matches` tests strings; {}", lhs.is_a())));
    }
    let glob = Glob::compile(pattern).map_err(|e| ConditionError {
        line: pat.line,
        column: pat.col + source_offset(&src[pat.start..pat.end], e.at()),
        message: format!("invalid glob: {e}"),
    })?;
    if glob.needs_subject() {
        return Err(pat.err(
            "`{subject}` is expanded only in rule `resources`; in a condition compare `subject` \
             itself, or write '\\\\{subject}' to match the literal text",
        ));
    }
    Ok(Node::Matches(lhs.val, glob))
}

/// Columns from a string token's opening quote to the source of its `at`-th (1-based)
/// decoded character: escapes take several source characters for one decoded one.
fn source_offset(token: &str, at: usize) -> usize {
    let mut chars = token.chars().skip(1).peekable();
    let mut col = 1;
    for _ in 1..at {
        match chars.next() {
            Some('\\') => {
                col += 2;
                if chars.next() == Some('u') {
                    for c in chars.by_ref() {
                        col += 1;
                        if c == '}' {
                            break;
                        }
                    }
                }
            }
            Some(_) => col += 1,
            None => break,
        }
    }
    col
}

/// A name or literal used alone as a condition.
pub(super) fn bare(o: Opd) -> Result<Node, ConditionError> {
    match (&o.val, o.ty) {
        (Operand::Lit(Lit::Bool(b)), _) => Ok(Node::Const(*b)),
        (Operand::Fact(f), Ty::Any) => Ok(Node::Truthy(f.clone())),
        (Operand::Fact(Fact::Roles), _) => Err(o.err("`roles` is a list, not a condition: write `roles has '…'`")),
        (Operand::Fact(_), _) => Err(o.err(format!("{}, not a condition: compare it, e.g. `{} == …`", o.is_a(), o.text))),
        _ => Err(o.err(format!(
            "{} literal, not a condition (only `true`, `false` and names under identity.* or \
             args.* stand alone)",
            o.is_a()
        ))),
    }
}
