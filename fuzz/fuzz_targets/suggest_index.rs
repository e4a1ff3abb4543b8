//! Fuzzes "did you mean"'s name index (`toolgate_core::suggest::NameIndex`): the input, if
//! UTF-8, is split at NUL into tool names and a query (the last part).
//!
//! Oracle (a panic or a hang = a finding): the tools offered through the index are exactly the
//! tools offered by scoring every name (`offered` with and without the index), for the query as
//! given, lower-cased and upper-cased, with every tool visible and with every `m`-th hidden (`m`
//! from the query's length); and through the index each tool's visibility is asked at most once.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_core::suggest::{offered, NameIndex};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut parts: Vec<&str> = text.split('\0').collect();
    let Some(query) = parts.pop() else { return };
    let lowered: Vec<(String, String)> = parts.iter().take(200).map(|n| (n.to_string(), n.to_lowercase())).collect();
    let tools: Vec<(&str, &str)> = lowered.iter().map(|(n, l)| (n.as_str(), l.as_str())).collect();
    let index = NameIndex::new(&tools);
    let hidden = query.len() % 4;
    let visible = |i: usize| hidden == 0 || !i.is_multiple_of(hidden);
    for q in [query.to_owned(), query.to_lowercase(), query.to_uppercase()] {
        let mut asked = vec![0u32; tools.len()];
        let indexed = offered(&q, &tools, Some(&index), |i| {
            asked[i] += 1;
            visible(i)
        });
        assert_eq!(indexed, offered(&q, &tools, None, visible), "{q:?} among {parts:?}");
        assert!(asked.iter().all(|&n| n <= 1), "{q:?} among {parts:?}: a tool's visibility asked twice");
        if hidden != 0 {
            assert_eq!(offered(&q, &tools, Some(&index), |_| true), offered(&q, &tools, None, |_| true), "{q:?} among {parts:?}");
        }
    }
});
