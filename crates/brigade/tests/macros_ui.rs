//! Compile tests of `#[brigade::main]` and `#[brigade::test]` with
//! trybuild: what they accept (`tests/ui/pass`, which are also run) and the
//! errors they report (`tests/ui/fail`, checked against the `.stderr` files
//! next to them; regenerate those with `TRYBUILD=overwrite` after a
//! deliberate change, and read the diff).

#[test]
fn macros_ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
