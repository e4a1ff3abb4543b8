//! Recursive-descent parser. Grammar (docs/conditions.md):
//!
//! ```text
//! condition  = or
//! or         = and { "or" and }
//! and        = unary { "and" unary }
//! unary      = "not" unary | "(" or ")" | comparison
//! comparison = operand [ ( "==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "has" ) operand
//!                      | "matches" string ]
//! operand    = name | literal | "[" [ literal { "," literal } ] "]"
//! ```
//!
//! Recursion happens only through `not` and `(`, each counted against `MAX_DEPTH`; `and`/`or`
//! chains are loops.

use super::ast::{Fact, Lit, Node, Num, Operand, Seg, ROOT_NAMES};
use super::check::{self, Opd, Ty};
use super::lex::{Tok, Token};
use super::{ConditionError, MAX_DEPTH, MAX_LIST};

const ROOTS: &str = "roles, identity.*, purpose, context.*, args.*, tool, action, resource, subject, now";

pub(super) struct Parser<'s> {
    pub src: &'s str,
    pub toks: Vec<Token>,
    pub pos: usize,
    pub depth: usize,
    /// Set when a name that only exists for a call (`args.*`, `tool`, …) is read.
    pub reads_call: bool,
}

impl<'s> Parser<'s> {
    fn peek(&self) -> &Token {
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(&self.peek().tok, Tok::Word(x) if &**x == w)
    }

    fn unexpected(&self, expected: &str) -> ConditionError {
        let t = self.peek();
        t.err(format!("expected {expected}; found {}", t.describe(self.src)))
    }

    fn enter(&mut self, at: &Token) -> Result<(), ConditionError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(at.err(format!("nested too deeply: at most {MAX_DEPTH} levels of parentheses and `not`")));
        }
        Ok(())
    }

    /// The whole condition: an `or` followed by the end.
    pub(super) fn condition(&mut self) -> Result<Node, ConditionError> {
        let node = self.or()?;
        if self.peek().tok != Tok::End {
            return Err(self.unexpected("`and`, `or` or the end of the condition"));
        }
        Ok(node)
    }

    fn or(&mut self) -> Result<Node, ConditionError> {
        let mut items = vec![self.and()?];
        while self.is_word("or") {
            self.next();
            items.push(self.and()?);
        }
        Ok(if items.len() == 1 { items.remove(0) } else { Node::Or(items.into()) })
    }

    fn and(&mut self) -> Result<Node, ConditionError> {
        let mut items = vec![self.unary()?];
        while self.is_word("and") {
            self.next();
            items.push(self.unary()?);
        }
        Ok(if items.len() == 1 { items.remove(0) } else { Node::And(items.into()) })
    }

    fn unary(&mut self) -> Result<Node, ConditionError> {
        if self.is_word("not") {
            let t = self.next();
            self.enter(&t)?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(Node::Not(Box::new(inner)));
        }
        if self.peek().tok == Tok::LParen {
            let open = self.next();
            self.enter(&open)?;
            let inner = self.or()?;
            if self.peek().tok != Tok::RParen {
                let what = format!("`and`, `or` or `)` to close the `(` at line {}, column {}", open.line, open.col);
                return Err(self.unexpected(&what));
            }
            self.next();
            self.depth -= 1;
            return Ok(inner);
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Node, ConditionError> {
        let lhs = self.operand("a name, a literal, `not` or `(`")?;
        let op = self.peek().clone();
        match &op.tok {
            Tok::Op(cmp) => {
                self.next();
                let rhs = self.operand("a name or a literal")?;
                check::compare(self.src, *cmp, &op, lhs, rhs)
            }
            Tok::Word(w) if matches!(&**w, "in" | "has") => {
                self.next();
                let rhs = self.operand("a name or a literal")?;
                if &**w == "in" {
                    check::member(self.src, &op, lhs, rhs)
                } else {
                    check::member(self.src, &op, rhs, lhs)
                }
            }
            Tok::Word(w) if &**w == "matches" => {
                self.next();
                let pat = self.next();
                match &pat.tok {
                    Tok::Str(p) => check::matches(lhs, &pat, p, self.src),
                    _ => Err(pat.err(format!("expected a string literal (a glob) after `matches`; found {}", pat.describe(self.src)))),
                }
            }
            _ => check::bare(lhs),
        }
    }

    fn operand(&mut self, what: &str) -> Result<Opd, ConditionError> {
        let first = self.peek().clone();
        let (val, ty) = match (&first.tok, self.literal()) {
            (_, Some(lit)) => {
                self.next();
                let ty = Ty::of_lit(&lit);
                (Operand::Lit(lit), ty)
            }
            (Tok::Word(w), _) if !matches!(&**w, "and" | "or" | "not" | "in" | "has" | "matches") => self.name()?,
            (Tok::LBracket, _) => self.list()?,
            _ => return Err(self.unexpected(what)),
        };
        let end = self.toks[self.pos.saturating_sub(1)].end;
        Ok(Opd { val, ty, line: first.line, col: first.col, text: self.src[first.start..end].into() })
    }

    /// The literal at the cursor (string, number, `true`, `false`, `null`), not consumed.
    fn literal(&self) -> Option<Lit> {
        Some(match &self.peek().tok {
            Tok::Str(s) => Lit::Str(s.clone()),
            Tok::Num(n) => Lit::Num(*n),
            Tok::Word(w) if &**w == "true" => Lit::Bool(true),
            Tok::Word(w) if &**w == "false" => Lit::Bool(false),
            Tok::Word(w) if &**w == "null" => Lit::Null,
            _ => return None,
        })
    }

    fn list(&mut self) -> Result<(Operand, Ty), ConditionError> {
        self.next();
        let mut items = Vec::new();
        if self.peek().tok != Tok::RBracket {
            loop {
                if items.len() == MAX_LIST {
                    return Err(self.peek().err(format!("a list holds at most {MAX_LIST} values")));
                }
                let what = "a string, a number, `true`, `false` or `null` (a list holds literals only)";
                items.push(self.literal().ok_or_else(|| self.unexpected(what))?);
                self.next();
                match self.peek().tok {
                    Tok::Comma => {
                        self.next();
                    }
                    Tok::RBracket => break,
                    _ => return Err(self.unexpected("`,` or `]`")),
                }
            }
        }
        self.next();
        Ok((Operand::List(items.into()), Ty::List))
    }

    fn name(&mut self) -> Result<(Operand, Ty), ConditionError> {
        let root = self.next();
        let Tok::Word(word) = &root.tok else { unreachable!("name() is called on a word") };
        let simple = match &**word {
            "roles" => Some((Fact::Roles, Ty::List)),
            "purpose" => Some((Fact::Purpose, Ty::Str)),
            "tool" => Some((Fact::Tool, Ty::Str)),
            "action" => Some((Fact::Action, Ty::Str)),
            "resource" => Some((Fact::Resource, Ty::Str)),
            "subject" => Some((Fact::Subject, Ty::Str)),
            _ => None,
        };
        let path = self.path()?;
        let (fact, ty) = match (simple, &**word) {
            (Some(simple), _) if path.is_empty() => simple,
            (Some(_), w) => return Err(root.err(format!("`{w}` has no fields"))),
            (None, "now") => match path.as_slice() {
                [] => (Fact::Now, Ty::Time),
                [Seg::Key(k)] if &**k == "hour" => (Fact::NowHour, Ty::Num),
                [Seg::Key(k)] if &**k == "minute" => (Fact::NowMinute, Ty::Num),
                [Seg::Key(k)] if &**k == "weekday" => (Fact::NowWeekday, Ty::Num),
                _ => return Err(root.err("unknown field of `now`; expected now, now.hour, now.minute or now.weekday")),
            },
            (None, w @ ("identity" | "args" | "context")) if path.is_empty() => {
                return Err(root.err(format!("`{w}` needs a key: `{w}.<key>` or `{w}['<key>']`")))
            }
            (None, "identity") => (Fact::Identity(path.into()), Ty::Any),
            (None, "args") => (Fact::Args(path.into()), Ty::Any),
            (None, "context") => match path.as_slice() {
                [Seg::Key(k)] => (Fact::Context(k.clone()), Ty::Str),
                _ => return Err(root.err("context values are strings: write `context.<key>` with a single key")),
            },
            (None, w) => return Err(root.err(unknown_name(w))),
        };
        self.reads_call |= fact.reads_call();
        Ok((Operand::Fact(fact), ty))
    }

    /// `.key`, `['key']` and `[index]` steps after a root name.
    fn path(&mut self) -> Result<Vec<Seg>, ConditionError> {
        let mut segs = Vec::new();
        loop {
            match self.peek().tok {
                Tok::Dot => {
                    self.next();
                    let Tok::Word(w) = self.peek().tok.clone() else {
                        return Err(self.unexpected("a key after `.` (for other characters write ['key'])"));
                    };
                    self.next();
                    segs.push(Seg::Key(w));
                }
                Tok::LBracket => {
                    self.next();
                    let seg = match &self.peek().tok {
                        Tok::Str(s) => Seg::Key(s.clone()),
                        Tok::Num(Num::I(i)) if *i >= 0 => Seg::Index(*i as usize),
                        _ => return Err(self.unexpected("a quoted key or an array index inside `[ ]`")),
                    };
                    self.next();
                    if self.peek().tok != Tok::RBracket {
                        return Err(self.unexpected("`]`"));
                    }
                    self.next();
                    segs.push(seg);
                }
                _ => return Ok(segs),
            }
        }
    }
}

fn unknown_name(w: &str) -> String {
    let close = ROOT_NAMES.iter().find(|r| strsim::levenshtein(r, w) <= 2 && w.len() > 2);
    let hint = close.map(|r| format!(" (did you mean `{r}`?)")).unwrap_or_default();
    format!("unknown name `{w}`{hint}; expected one of {ROOTS}")
}
