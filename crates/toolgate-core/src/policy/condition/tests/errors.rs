use super::err;
use crate::policy::condition::{Condition, ConditionError, MAX_DEPTH, MAX_LIST, MAX_SOURCE_CHARS};

/// Asserts `src` fails at `line:column` with a message containing `needle`.
fn at(src: &str, line: usize, column: usize, needle: &str) {
    let e = err(src);
    assert_eq!((e.line, e.column), (line, column), "`{src}`: {e}");
    assert!(e.message.contains(needle), "`{src}`: {e}\nwanted: {needle}");
}

#[test]
fn display_shape() {
    let e = ConditionError { line: 1, column: 12, message: "boom".into() };
    assert_eq!(e.to_string(), "line 1, column 12: boom");
}

#[test]
fn unknown_names() {
    at(
        "rolez has 'x'",
        1,
        1,
        "unknown name `rolez` (did you mean `roles`?); expected one of roles, identity.*, purpose, \
         context.*, args.*, tool, action, resource, subject, now",
    );
    at("purpose == 'a' and zzz == 1", 1, 20, "unknown name `zzz`; expected one of");
    // The example of docs/conditions.md.
    let e = err("purpose == 'audit' and rolez has 'x'");
    assert_eq!(
        e.to_string(),
        "line 1, column 24: unknown name `rolez` (did you mean `roles`?); expected one of roles, \
         identity.*, purpose, context.*, args.*, tool, action, resource, subject, now"
    );
    at("roles.x has 'a'", 1, 1, "`roles` has no fields");
    at("identity == 'a'", 1, 1, "`identity` needs a key");
    at("context.a.b == 'x'", 1, 1, "context values are strings");
    at("now.day == 3", 1, 1, "unknown field of `now`");
    at("args. == 1", 1, 7, "expected a key after `.`");
    at("args[1.5] == 1", 1, 6, "a quoted key or an array index");
    at("args['a' == 1", 1, 10, "expected `]`; found `==`");
}

#[test]
fn positions_count_characters_and_lines() {
    // Columns count characters, not bytes: "é" is one column.
    at("'é' == purpose and x", 1, 20, "unknown name `x`");
    at("roles has 'a'\n  and\n  bogus == 1", 3, 3, "unknown name `bogus`");
    at("roles has 'a'\r\nand nope", 2, 5, "unknown name `nope`");
    at("purpose == 'a' or", 1, 18, "expected a name, a literal, `not` or `(`; found the end");
    at("", 1, 1, "found the end of the condition");
    at("   \n  ", 2, 3, "found the end of the condition");
}

#[test]
fn syntax_errors() {
    at("purpose = 'a'", 1, 9, "write `==`");
    at("!identity.admin", 1, 1, "write `not`");
    at("identity.admin && true", 1, 16, "write `and`");
    at("identity.admin || true", 1, 16, "write `or`");
    at("purpose == 'a' AND true", 1, 16, "expected `and`, `or` or the end of the condition; found `AND`");
    at("purpose == 'a' == 'b'", 1, 16, "found `==`");
    at("(purpose == 'a'", 1, 16, "`)` to close the `(` at line 1, column 1");
    at("purpose == 'a')", 1, 15, "found `)`");
    at("purpose == and", 1, 12, "expected a name or a literal; found `and`");
    at("purpose @ 'a'", 1, 9, "unexpected character `@`");
    at("purpose\u{a0}== 'a'", 1, 8, "unexpected character U+00A0");
    at("purpose == 'abc", 1, 12, "string not closed: add the closing '");
    at("purpose == \"a\nb\"", 1, 12, "string not closed");
    at(r"purpose == 'a\qb'", 1, 14, r"unknown escape `\q`");
    at(r"args.p matches 'a\*'", 1, 18, r"write `\\*`");
    at(r"purpose == '\u{d800}'", 1, 13, "not a Unicode scalar value");
    at(r"purpose == '\u00e9'", 1, 13, r"\u{…} with 1 to 6 hex digits");
    at(r"purpose == '\u{}'", 1, 13, r"\u{…}");
    at("args.n == 012", 1, 11, "leading zeros");
    at("args.n == 1.", 1, 13, "digit after the decimal point");
    at("args.n == 1e", 1, 13, "digit in the exponent");
    at("args.n == -x", 1, 12, "expected a digit");
    at("args.n == 1e400", 1, 11, "out of range");
    at("args.n in [1, 2", 1, 16, "expected `,` or `]`; found the end");
    at("args.n in [1, [2]]", 1, 15, "a list holds literals only");
    at("args.n in [1, purpose]", 1, 15, "a list holds literals only");
    at("args.n in [1,]", 1, 14, "found `]`");
    at("args.p matches purpose", 1, 16, "expected a string literal (a glob) after `matches`");
}

#[test]
fn type_errors() {
    at("'purpose' == 'audit'", 1, 11, "both sides of `==` are literals; one side must be a name (write the name purpose without quotes)");
    at("1 < 2", 1, 3, "both sides of `<` are literals");
    at("'a' in ['a']", 1, 5, "both sides of `in` are literals");
    at("purpose == 3", 1, 9, "`purpose` is a string and `3` is a number: `==` between them is never true");
    at("tool != true", 1, 6, "`true` is a boolean");
    at("args.x < true", 1, 8, "`<` orders numbers, strings and times; `true` is a boolean");
    at("args.x >= null", 1, 8, "`null` is null");
    at("roles == 'a'", 1, 1, "`roles` is a list: write `roles has '…'`");
    at("args.x == ['a']", 1, 11, "a list literal can only be the right side of `in`");
    at("now < 'tomorrow'", 1, 7, "`'tomorrow'` is not an RFC 3339 date: expected YYYY-MM-DD");
    at("now < '2027-02-30'", 1, 7, "day 30 does not exist in 2027-02");
    at("now < purpose", 1, 5, "`now` is a time and `purpose` is a string");
    at("now.hour == '9'", 1, 10, "`now.hour` is a number and `'9'` is a string");
    at("now in [1]", 1, 1, "`now` can only be compared");
    at("'x' in purpose", 1, 8, "the right side of `in` must be a list");
    at("purpose has 'x'", 1, 1, "the left side of `has` must be a list");
    at("roles in args.x", 1, 1, "`roles` is a list");
    at("roles has ['a']", 1, 11, "a list literal can only be the right side of `in`");
    at("purpose in [1, 2]", 1, 9, "`purpose` is a string but no value in the list is");
    at("'x' matches 'x*'", 1, 1, "the left side of `matches` must be a name");
    at("roles matches 'x*'", 1, 1, "`matches` tests strings; `roles` is a list");
    at("now.hour matches '1*'", 1, 1, "`now.hour` is a number");
    at("purpose matches 'a\\\\'", 1, 19, "invalid glob: glob pattern ends with a lone `\\` at character 2");
    at("purpose matches '\\u{e9}\\\\'", 1, 24, "at character 2");
    at("resource matches 'file:home/{subject}/**'", 1, 18, "`{subject}` is expanded only in rule `resources`");
    at("purpose", 1, 1, "`purpose` is a string, not a condition: compare it, e.g. `purpose == …`");
    at("roles", 1, 1, "`roles` is a list, not a condition");
    at("context.region", 1, 1, "`context.region` is a string, not a condition");
    at("now.hour and true", 1, 1, "is a number, not a condition");
    at("'yes'", 1, 1, "`'yes'` is a string literal, not a condition");
    at("3 or true", 1, 1, "is a number literal");
    at("null", 1, 1, "`null` is null literal, not a condition");
}

#[test]
fn limits() {
    let long = format!("purpose == '{}'", "é".repeat(MAX_SOURCE_CHARS));
    at(&long, 1, MAX_SOURCE_CHARS + 1, "longer than 4096 characters");
    let lines = format!("true and\n{}", "x".repeat(MAX_SOURCE_CHARS));
    at(&lines, 2, MAX_SOURCE_CHARS - 8, "longer than 4096 characters");
    let ok = format!("purpose == '{}'", "a".repeat(MAX_SOURCE_CHARS - 13));
    assert!(Condition::parse(&ok).is_ok());

    let deep = |n: usize| format!("{}true{}", "(".repeat(n), ")".repeat(n));
    assert!(Condition::parse(&deep(MAX_DEPTH)).is_ok());
    at(&deep(MAX_DEPTH + 1), 1, MAX_DEPTH + 1, "nested too deeply: at most 32 levels");
    let nots = |n: usize| format!("{}true", "not ".repeat(n));
    assert!(Condition::parse(&nots(MAX_DEPTH)).is_ok());
    at(&nots(MAX_DEPTH + 1), 1, 4 * MAX_DEPTH + 1, "nested too deeply");
    let mixed = "not (".repeat(16) + "true" + &")".repeat(16);
    assert!(Condition::parse(&mixed).is_ok());
    let mixed = "not (".repeat(16) + "not true" + &")".repeat(16);
    at(&mixed, 1, 81, "nested too deeply");
    // Unbounded input never recurses deeper than the limit.
    assert!(Condition::parse(&"(".repeat(4000)).is_err());
    assert!(Condition::parse(&"not ".repeat(1000)).is_err());

    let list = |n: usize| format!("args.n in [{}]", vec!["1"; n].join(","));
    assert!(Condition::parse(&list(MAX_LIST)).is_ok());
    at(&list(MAX_LIST + 1), 1, 11 + 2 * MAX_LIST + 1, "at most 256 values");
    // Long flat chains are loops, not recursion.
    let chain = vec!["identity.admin"; 200].join(" and ");
    assert!(Condition::parse(&chain).is_ok());
}
