use super::{eval_in, t, Facts};
use crate::policy::condition::Condition;
use crate::policy::condition::Truth::{self, False, True, Unknown};
use serde_json::json;

#[test]
fn names_read_the_scope() {
    assert_eq!(t("roles has 'verifier'"), True);
    assert_eq!(t("'analyst' in roles"), True);
    assert_eq!(t("roles has 'admin'"), False);
    assert_eq!(t("purpose == 'audit'"), True);
    assert_eq!(t("tool == 'read_file' and action == 'read_file'"), True);
    assert_eq!(t("resource == 'file:reports/q1.pdf'"), True);
    assert_eq!(t("subject == 'ann'"), True);
    assert_eq!(t("context.region == 'eu'"), True);
    assert_eq!(t("identity.tenant == context.tenant"), True);
    assert_eq!(t("identity.org.id == 'o-1'"), True);
    assert_eq!(t("identity['org']['id'] == 'o-1'"), True);
    assert_eq!(t("identity.org.teams has 'blue'"), True);
    assert_eq!(t("'red' in identity.org.teams"), True);
    assert_eq!(t("args['odd key'] == 'x'"), True);
    assert_eq!(t("args.nested.deep.n == -2"), True);
    assert_eq!(t("args.list[0].name == 'first'"), True);
    assert_eq!(t("args.list[0]['name'] == 'first'"), True);
    assert_eq!(t("args.tags[2] == 3"), True);
    assert_eq!(t("args.in == 1 or args.and == 1"), False, "keywords are fine as keys");
}

#[test]
fn bare_facts_need_json_true() {
    assert_eq!(t("identity.admin"), True);
    assert_eq!(t("args.dry"), True);
    assert_eq!(t("identity.flag"), False, "the string \"true\" is not true");
    assert_eq!(t("identity.level"), False);
    assert_eq!(t("identity.missing"), False);
    assert_eq!(t("not identity.missing"), True);
    assert_eq!(t("true"), True);
    assert_eq!(t("false"), False);
}

#[test]
fn precedence() {
    // not binds looser than comparisons, tighter than and; and tighter than or.
    assert_eq!(t("not purpose == 'x'"), True);
    assert_eq!(t("not roles has 'admin' and purpose == 'audit'"), True);
    assert_eq!(t("true or false and false"), True);
    assert_eq!(t("(true or false) and false"), False);
    assert_eq!(t("false and false or true"), True);
    assert_eq!(t("not false and false"), False);
    assert_eq!(t("not (false and false)"), True);
    assert_eq!(t("not not true"), True);
    assert_eq!(t("((((true))))"), True);
}

fn kleene(a: Truth, b: Truth) -> (Truth, Truth) {
    let src = |x: Truth| match x {
        True => "true",
        False => "false",
        Unknown => "args.dry", // unknown while listing
    };
    let mut f = Facts::new();
    f.listing = true;
    let and = eval_in(&format!("{} and {}", src(a), src(b)), &f);
    let or = eval_in(&format!("{} or {}", src(a), src(b)), &f);
    assert_eq!(and, a.and(b), "{a:?} and {b:?}");
    assert_eq!(or, a.or(b), "{a:?} or {b:?}");
    (and, or)
}

#[test]
fn kleene_tables() {
    use std::ops::Not;
    let all = [True, False, Unknown];
    let want_and = [[True, False, Unknown], [False, False, False], [Unknown, False, Unknown]];
    let want_or = [[True, True, True], [True, False, Unknown], [True, Unknown, Unknown]];
    for (i, a) in all.into_iter().enumerate() {
        for (j, b) in all.into_iter().enumerate() {
            assert_eq!(kleene(a, b), (want_and[i][j], want_or[i][j]), "{a:?} {b:?}");
        }
    }
    assert_eq!([True.not(), False.not(), Unknown.not()], [False, True, Unknown]);
    let mut f = Facts::new();
    f.listing = true;
    assert_eq!(eval_in("not args.dry", &f), Unknown);
    assert_eq!(eval_in("not (args.amount > 5 or false)", &f), Unknown);
}

#[test]
fn missing_never_satisfies() {
    for src in [
        "identity.nope == 'a'",
        "identity.nope != 'a'",
        "identity.nope < 3",
        "identity.nope >= 3",
        "identity.nope in ['a']",
        "identity.nope has 'a'",
        "'a' in identity.nope",
        "identity.nope matches '*'",
        "args.path.x == 'a'",
        "args.tags.x == 'a'",
        "args.tags[9] != 1",
        "args[0] == 1",
        "identity.tenant[0] == 'a'",
        "identity.org.id.x != 'q'",
        "context.nope != 'x'",
        "identity.tenant == identity.nope",
        "identity.nope == identity.nope2",
    ] {
        assert_eq!(t(src), False, "{src}");
        assert_eq!(t(&format!("not ({src})")), True, "not ({src})");
    }
    let mut f = Facts::new();
    f.purpose = None;
    f.tool = None;
    f.resource = None;
    f.subject = None;
    f.roles.clear();
    for src in ["purpose != 'x'", "tool != 'x'", "action == 'read_file'", "resource matches '**'", "subject != 'bob'", "roles has 'analyst'"] {
        assert_eq!(eval_in(src, &f), False, "{src}");
    }
    // a caller with nothing set, and no call: every fact absent
    let nobody = crate::CallContext::default();
    let none = crate::policy::caller_scope(&nobody, Facts::new().now_ms);
    for src in ["identity.a == 1", "context.a != 'x'", "args.a != 1", "identity.a"] {
        assert_eq!(Condition::parse(src).unwrap().eval(&none), False, "{src}");
    }
}

#[test]
fn listing_makes_args_and_resource_unknown() {
    let mut f = Facts::new();
    f.listing = true;
    for src in [
        "args.amount <= 100",
        "args.amount > 100",
        "resource matches 'file:reports/**'",
        "resource == 'x'",
        "args.tags has 'a'",
        "'a' in args.tags",
        "args.nope == 1",
    ] {
        assert_eq!(eval_in(src, &f), Unknown, "{src}");
    }
    // Known facts still decide; a missing one is still false.
    assert_eq!(eval_in("roles has 'admin' and args.amount < 5", &f), False);
    assert_eq!(eval_in("roles has 'analyst' and args.amount < 5", &f), Unknown);
    assert_eq!(eval_in("roles has 'analyst' or args.amount < 5", &f), True);
    assert_eq!(eval_in("args.amount < identity.nope", &f), False);
    assert_eq!(eval_in("tool == 'read_file'", &f), True);
    f.listing = false;
    assert_eq!(eval_in("args.amount <= 100", &f), True);
}

#[test]
fn equality_by_type() {
    for (src, want) in [
        ("args.amount == 50", True),
        ("args.amount == 50.0", True),
        ("args.amount == 5e1", True),
        ("args.amount != 51", True),
        ("args.amount == '50'", False),
        ("args.amount != '50'", False),
        ("identity.flag == true", False),
        ("identity.flag != true", False),
        ("identity.admin == true", True),
        ("identity.admin != false", True),
        ("identity.nothing == null", True),
        ("identity.admin != null", True),
        ("identity.nothing != null", False),
        ("identity.nope != null", False),
        ("args.path != null", True),
        ("args.tags != null", True),
        ("identity.org == null", False),
        ("purpose != null", True),
        ("null == identity.nothing", True),
        ("identity.tenant == 'acme'", True),
        ("identity.tenant != 'Acme'", True),
        ("identity.org == 'o-1'", False),
        ("identity.org != 'o-1'", False),
        ("args.tags == 'a'", False),
        ("args.tags != 'a'", False),
        ("identity.big == 18446744073709551615", True),
        ("identity.big > 18446744073709551614", True),
        ("identity.big == 18446744073709551614", False),
        ("identity.level > -9223372036854775808", True),
        ("identity.ratio == 0.5", True),
        ("identity.ratio < 1", True),
        ("identity.tenant == identity.tenant", True),
        ("context.tenant != identity.tenant", False),
        ("purpose == '\\u{61}udit'", True),
        ("purpose == \"audit\"", True),
    ] {
        assert_eq!(t(src), want, "{src}");
    }
}

#[test]
fn ordering_by_type() {
    for (src, want) in [
        ("args.amount <= 100", True),
        ("args.amount < 50", False),
        ("args.amount >= 50", True),
        ("args.amount > 49.5", True),
        ("-3 < args.amount", True),
        ("args.nested.deep.n < -1", True),
        ("identity.tenant < 'b'", True),
        ("identity.tenant > 'acmd'", True),
        ("identity.tenant < 'B'", False),
        ("'é' > identity.tenant", True),
        ("identity.tenant < 5", False),
        ("identity.tenant >= 5", False),
        ("identity.admin > identity.level", False),
        ("identity.org < identity.org", False),
        ("identity.nothing <= identity.nothing", False),
    ] {
        assert_eq!(t(src), want, "{src}");
    }
}

#[test]
fn membership() {
    for (src, want) in [
        ("args.amount in [1, 50]", True),
        ("args.amount in [1, 50.0]", True),
        ("args.amount in ['50']", False),
        ("args.amount in []", False),
        ("identity.nothing in [null]", True),
        ("identity.admin in [true]", True),
        ("args.tags has 3", True),
        ("args.tags has '3'", False),
        ("args.tags has 'b'", True),
        ("args.amount in args.tags", False),
        ("identity.tenant in args.tags", False),
        ("'a' in args.path", False),
        ("args.path has 'r'", False),
        ("identity.org in ['o-1']", False),
        ("roles has identity.tenant", False),
        ("context.tenant in ['acme', 'other']", True),
        ("purpose in ['audit']", True),
        ("subject in roles", False),
        ("roles has subject", False),
    ] {
        assert_eq!(t(src), want, "{src}");
    }
}

#[test]
fn globs() {
    for (src, want) in [
        ("resource matches 'file:reports/**'", True),
        ("resource matches 'file:*'", False),
        ("args.path matches 'reports/*.pdf'", True),
        ("args.path matches '*.pdf'", False),
        ("tool matches 'read_*'", True),
        ("tool matches 'READ_*'", False),
        ("args.amount matches '*'", False),
        ("args.tags matches '**'", False),
        ("args['odd key'] matches '?'", True),
        ("purpose matches 'a\\\\*dit'", False),
        ("resource matches '\\\\{subject}'", False),
    ] {
        assert_eq!(t(src), want, "{src}");
    }
}

#[test]
fn reads_call_and_source() {
    for (src, reads) in [
        ("roles has 'x'", false),
        ("identity.a and purpose == 'p' and context.c == 'x'", false),
        ("subject == 'a' or now.hour > 3", false),
        ("args.a == 1", true),
        ("tool == 'x'", true),
        ("not (action == 'x')", true),
        ("resource matches '*'", true),
        ("roles has 'x' or (true and args.b)", true),
    ] {
        let c = Condition::parse(src).unwrap();
        assert_eq!(c.reads_call(), reads, "{src}");
        assert_eq!(c.source(), src);
    }
}

#[test]
fn common_case_is_fast() {
    let c = Condition::parse("roles has 'verifier' and purpose == 'audit'").unwrap();
    let f = Facts::new();
    let s = f.scope();
    let n = 200_000;
    let start = std::time::Instant::now();
    for _ in 0..n {
        assert_eq!(std::hint::black_box(&c).eval(std::hint::black_box(&s)), True);
    }
    let per = start.elapsed() / n;
    // Loose enough for debug builds on a busy machine; release is tens of nanoseconds.
    assert!(per < std::time::Duration::from_micros(5), "{per:?} per eval");
}

/// The worked examples of docs/conditions.md, as documented.
#[test]
fn documented_examples() {
    let mut f = Facts::new();
    for src in [
        "roles has 'verifier'",
        "'verifier' in roles",
        "purpose == 'audit'",
        "identity.tenant == context.tenant",
        "args.amount <= 100",
        "resource matches 'file:reports/**'",
        "now.weekday in [1, 2, 3, 4, 5] and now.hour >= 9 and now.hour < 17",
        "now < '2027-01-01' and not (context.env == 'prod')",
        "identity.admin or (roles has 'support' and args.ticket != null)",
    ] {
        assert_eq!(eval_in(src, &f), True, "{src}");
    }
    f.listing = true;
    assert_eq!(eval_in("args.amount <= 100", &f), Unknown);
    f.listing = false;
    f.context.insert("env".into(), json!("prod"));
    assert_eq!(eval_in("now < '2027-01-01' and not (context.env == 'prod')", &f), False);

    let support = "identity.admin or (roles has 'support' and args.ticket != null)";
    f.identity.insert("admin".into(), json!("true"));
    f.roles.push("support".into());
    assert_eq!(eval_in(support, &f), False, "no ticket, and \"true\" is not true");
    f.args.insert("ticket".into(), json!("T-1"));
    assert_eq!(eval_in(support, &f), True);

    let region = "args.region in ['eu-west-1', 'eu-central-1'] and identity.org.teams has 'platform'";
    f.args.insert("region".into(), json!("eu-west-1"));
    assert_eq!(eval_in(region, &f), False);
    f.identity["org"]["teams"].as_array_mut().unwrap().push(json!("platform"));
    assert_eq!(eval_in(region, &f), True);

    let session = "now < identity.exp and identity['auth-level'] >= 2";
    assert_eq!(eval_in(session, &f), False, "no auth-level");
    f.identity.insert("auth-level".into(), json!(2));
    assert_eq!(eval_in(session, &f), True);
    f.now_ms = 1_900_000_000_000;
    assert_eq!(eval_in(session, &f), False, "expired");
}
