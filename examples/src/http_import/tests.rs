//! Unit tests of the import batch and the handler.

use super::*;

#[test]
fn batches_are_deterministic_and_distinct() {
    assert_eq!(import_batch(0), import_batch(0));
    assert_ne!(import_batch(0), import_batch(ROWS_PER_BATCH));
}

#[test]
fn only_get_root_is_found() {
    let ok = respond(&Request::get("/").body(()).unwrap());
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(ok.headers()[CONTENT_TYPE], "text/plain");
    for request in [
        Request::get("/other").body(()).unwrap(),
        Request::post("/").body(()).unwrap(),
    ] {
        assert_eq!(respond(&request).status(), StatusCode::NOT_FOUND);
    }
}
