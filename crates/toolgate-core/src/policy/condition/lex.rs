//! Tokens of the condition language, each with its 1-based line and column (in characters)
//! and its byte span in the source, so errors can point at it and quote it.

use super::ast::{CmpOp, Num};
use super::ConditionError;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    /// A name or keyword: `[A-Za-z_][A-Za-z0-9_]*`.
    Word(Box<str>),
    Str(Box<str>),
    Num(Num),
    Op(CmpOp),
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Dot,
    End,
}

#[derive(Debug, Clone)]
pub(super) struct Token {
    pub tok: Tok,
    pub line: usize,
    pub col: usize,
    /// Byte span in the source.
    pub start: usize,
    pub end: usize,
}

impl Token {
    pub(super) fn err(&self, message: impl Into<String>) -> ConditionError {
        ConditionError { line: self.line, column: self.col, message: message.into() }
    }

    /// How an error message names this token: "`and`", "the string 'x'", "the end".
    pub(super) fn describe(&self, src: &str) -> String {
        match self.tok {
            Tok::End => "the end of the condition".into(),
            Tok::Str(_) => format!("the string {}", &src[self.start..self.end]),
            Tok::Num(_) => format!("the number {}", &src[self.start..self.end]),
            _ => format!("`{}`", &src[self.start..self.end]),
        }
    }
}

struct Cursor<'s> {
    src: &'s str,
    /// Byte offset of the next character.
    at: usize,
    line: usize,
    col: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.src[self.at..].chars().next()
    }

    fn peek2(&self) -> Option<char> {
        self.src[self.at..].chars().nth(1)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn err(&self, message: impl Into<String>) -> ConditionError {
        ConditionError { line: self.line, column: self.col, message: message.into() }
    }
}

/// Splits `src` into tokens ending with one `Tok::End` (positioned after the last character).
pub(super) fn lex(src: &str) -> Result<Vec<Token>, ConditionError> {
    let mut cur = Cursor { src, at: 0, line: 1, col: 1 };
    let mut out = Vec::new();
    loop {
        while matches!(cur.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            cur.bump();
        }
        let (line, col, start) = (cur.line, cur.col, cur.at);
        let Some(c) = cur.peek() else {
            out.push(Token { tok: Tok::End, line, col, start, end: start });
            return Ok(out);
        };
        let tok = match c {
            'a'..='z' | 'A'..='Z' | '_' => {
                while matches!(cur.peek(), Some('a'..='z' | 'A'..='Z' | '0'..='9' | '_')) {
                    cur.bump();
                }
                Tok::Word(src[start..cur.at].into())
            }
            '\'' | '"' => Tok::Str(string(&mut cur)?.into()),
            '-' | '0'..='9' => Tok::Num(number(&mut cur)?),
            _ => {
                let two = match (c, cur.peek2()) {
                    ('=', Some('=')) => Some(CmpOp::Eq),
                    ('!', Some('=')) => Some(CmpOp::Ne),
                    ('<', Some('=')) => Some(CmpOp::Le),
                    ('>', Some('=')) => Some(CmpOp::Ge),
                    _ => None,
                };
                if let Some(op) = two {
                    cur.bump();
                    cur.bump();
                    out.push(Token { tok: Tok::Op(op), line, col, start, end: cur.at });
                    continue;
                }
                let tok = match c {
                    '<' => Tok::Op(CmpOp::Lt),
                    '>' => Tok::Op(CmpOp::Gt),
                    '(' => Tok::LParen,
                    ')' => Tok::RParen,
                    '[' => Tok::LBracket,
                    ']' => Tok::RBracket,
                    ',' => Tok::Comma,
                    '.' => Tok::Dot,
                    '=' => return Err(cur.err("unexpected `=`; write `==` to compare")),
                    '!' => return Err(cur.err("unexpected `!`; write `not` to negate, `!=` for not equal")),
                    '&' => return Err(cur.err("unexpected `&`; write `and`")),
                    '|' => return Err(cur.err("unexpected `|`; write `or`")),
                    c if c.is_control() || c.is_whitespace() => return Err(cur.err(format!("unexpected character U+{:04X}", c as u32))),
                    c => return Err(cur.err(format!("unexpected character `{c}`"))),
                };
                cur.bump();
                tok
            }
        };
        out.push(Token { tok, line, col, start, end: cur.at });
    }
}

const ESCAPES: &str = r#"expected one of \\ \' \" \n \t \u{…}"#;

fn string(cur: &mut Cursor<'_>) -> Result<String, ConditionError> {
    let open = cur.err("");
    let quote = cur.bump().unwrap_or('\'');
    let mut out = String::new();
    loop {
        let at = cur.err("");
        match cur.bump() {
            None | Some('\n') => {
                return Err(ConditionError { message: format!("string not closed: add the closing {quote} (strings do not span lines)"), ..open })
            }
            Some(c) if c == quote => return Ok(out),
            Some('\\') => {
                let c = match cur.bump() {
                    Some('\\') => '\\',
                    Some('\'') => '\'',
                    Some('"') => '"',
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('u') => unicode(cur).map_err(|m| ConditionError { message: m, ..at.clone() })?,
                    Some(other) if other != '\n' => {
                        let hint = if "*?{}".contains(other) { format!("; to give `\\{other}` to a glob, write `\\\\{other}`") } else { String::new() };
                        return Err(ConditionError { message: format!("unknown escape `\\{other}`; {ESCAPES}{hint}"), ..at });
                    }
                    _ => return Err(ConditionError { message: format!("unfinished escape; {ESCAPES}"), ..at }),
                };
                out.push(c);
            }
            Some(c) => out.push(c),
        }
    }
}

/// After `\u`: `{` 1–6 hex digits `}` naming a Unicode scalar value.
fn unicode(cur: &mut Cursor<'_>) -> Result<char, String> {
    const FORM: &str = r"a Unicode escape is \u{…} with 1 to 6 hex digits, e.g. \u{e9}";
    if cur.bump() != Some('{') {
        return Err(FORM.into());
    }
    let mut value = 0u32;
    let mut digits = 0;
    loop {
        match cur.bump() {
            Some('}') if digits > 0 => break,
            Some(c) if c.is_ascii_hexdigit() && digits < 6 => {
                value = value * 16 + c.to_digit(16).unwrap_or(0);
                digits += 1;
            }
            _ => return Err(FORM.into()),
        }
    }
    char::from_u32(value).ok_or_else(|| format!(r"\u{{{value:X}}} is not a Unicode scalar value"))
}

/// A JSON number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn number(cur: &mut Cursor<'_>) -> Result<Num, ConditionError> {
    let start = cur.at;
    let first = cur.err("");
    let digits = |cur: &mut Cursor<'_>| {
        let mut n = 0;
        while matches!(cur.peek(), Some('0'..='9')) {
            cur.bump();
            n += 1;
        }
        n
    };
    if cur.peek() == Some('-') {
        cur.bump();
    }
    let int_start = cur.at;
    if digits(cur) == 0 {
        return Err(cur.err("expected a digit: numbers are written as in JSON (`-5`, `0.5`, `1e3`)"));
    }
    if cur.src[int_start..cur.at].len() > 1 && cur.src[int_start..].starts_with('0') {
        return Err(ConditionError { message: format!("leading zeros are not allowed in `{}`", &cur.src[start..cur.at]), ..first });
    }
    let mut integer = true;
    if cur.peek() == Some('.') {
        cur.bump();
        integer = false;
        if digits(cur) == 0 {
            return Err(cur.err("expected a digit after the decimal point"));
        }
    }
    if matches!(cur.peek(), Some('e' | 'E')) {
        cur.bump();
        integer = false;
        if matches!(cur.peek(), Some('+' | '-')) {
            cur.bump();
        }
        if digits(cur) == 0 {
            return Err(cur.err("expected a digit in the exponent"));
        }
    }
    let text = &cur.src[start..cur.at];
    if integer {
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Num::I(i));
        }
        if let Ok(u) = text.parse::<u64>() {
            return Ok(Num::U(u));
        }
    }
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => Ok(Num::F(f)),
        _ => Err(ConditionError { message: format!("the number `{text}` is out of range"), ..first }),
    }
}
