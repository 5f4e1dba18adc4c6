//! The `#[brigade::main]` and `#[brigade::test]` attributes.
//!
//! This crate is an implementation detail of brigade: use the attributes
//! through their re-exports, `brigade::main` and `brigade::test` (brigade's
//! `macros` feature, on by default), whose documentation has runnable
//! examples. The expanded code names `::brigade`, so the crate that uses
//! them must depend on brigade under that name.
//!
//! Both attributes turn an `async fn` without parameters into a plain `fn`
//! that builds a `brigade::Runtime` and runs the function's body on it
//! with `block_on`:
//!
//! ```ignore
//! #[brigade::main(worker_threads = 2)]
//! async fn main() -> std::io::Result<()> {
//!     serve().await
//! }
//! ```
//!
//! expands to (roughly)
//!
//! ```ignore
//! fn main() -> std::io::Result<()> {
//!     let body = async { serve().await };
//!     brigade::Builder::new()
//!         .worker_threads(2)
//!         .build()
//!         .unwrap_or_else(|error| panic!("could not build the brigade runtime: {error}"))
//!         .block_on(body)
//! }
//! ```
//!
//! # Arguments
//!
//! tokio's, so that `#[tokio::main(...)]` and `#[tokio::test(...)]` port by
//! renaming:
//!
//! - `flavor = "current_thread"`: a current-thread runtime
//!   (`brigade::runtime::Builder::new_current_thread`), as tokio's: no
//!   worker thread; the calling thread runs the body, with `block_on`, and
//!   the tasks it spawns, taking turns (a spawned task runs once the body
//!   awaits). `flavor = "multi_thread"`: `worker_threads` workers, or the
//!   builder's default.
//! - `worker_threads = N`: the number of worker threads, a positive integer
//!   literal (see `brigade::Builder::worker_threads`). It implies
//!   `multi_thread`, and is an error with `flavor = "current_thread"`.
//! - `start_paused = true`: the runtime's clock starts paused
//!   (`brigade::Builder::start_paused`), with any flavor: brigade's paused
//!   time works on several workers, where tokio's needs `current_thread`.
//! - `crate = "path"`: the path the expansion names brigade by, for a crate
//!   that depends on it under another name or re-exports it.
//!
//! Without `flavor` or `worker_threads`, `#[brigade::test]` uses the
//! current-thread flavour, as tokio's default test does: the body and its
//! tasks take turns on the test's thread, so a ported test keeps the
//! concurrency it was written for (what it may assume about which task ran
//! when); `#[brigade::main]` uses the builder's
//! default, `BRIGADE_WORKER_THREADS` if set, else one worker per available
//! CPU, as tokio's default `multi_thread` main does.
//!
//! # Compile errors
//!
//! The attributes reject, with an error pointing at the culprit: a function
//! that is not `async`, a function with parameters or generic parameters,
//! an item that is not a function, an unknown or repeated argument, an
//! argument without its value or with a value of the wrong kind (a
//! `flavor` other than the two, a `worker_threads` that is not a positive
//! integer literal, a `start_paused` that is not `true` or `false`, a
//! `crate` that is not a string holding a path), `worker_threads` with
//! `flavor = "current_thread"`, and (for `#[brigade::test]`) a function that
//! already has a `#[test]` attribute.
#![warn(missing_docs)]

mod args;

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{ToTokens, quote, quote_spanned};
use syn::{Attribute, Error, Item, ItemFn, ReturnType, Type};

use args::{Config, parse_arguments};

/// # Arguments
///
/// All optional (the crate docs have the details):
/// - `flavor = "current_thread"` (no worker thread: the calling thread
///   runs the body and the tasks, taking turns) or
///   `flavor = "multi_thread"` (the default here);
/// - `worker_threads = N`: the number of worker threads, a positive
///   integer literal, passed to `brigade::Builder::worker_threads`; without
///   it, the builder's default (`BRIGADE_WORKER_THREADS`, else one per CPU);
/// - `start_paused = true`: start with the clock paused;
/// - `crate = "path"`: the path brigade is known by.
///
/// # Expansion
///
/// The function becomes a synchronous `fn` with the same name, visibility,
/// attributes and return type that builds a `brigade::Runtime` and
/// `block_on`s the body; `?` in the body converts errors into the declared
/// return type. If the runtime cannot be built (an invalid
/// `BRIGADE_WORKER_THREADS`, say), the function panics with the reason.
///
/// The attribute also accepts an `async fn` not named `main`: calling it
/// then starts a runtime, runs the body and shuts the runtime down. Like
/// any `block_on`, the call panics inside a runtime: make it from
/// synchronous code.
///
/// # Compile errors
///
/// A function that is not `async`, has parameters, generic parameters or a
/// `where` clause; an item that is not a function; an unknown argument, one
/// given twice, or one with a value of the wrong kind; `worker_threads`
/// with `flavor = "current_thread"`.
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(Kind::Main, args.into(), item.into()).into()
}

/// # Arguments
///
/// Those of [`macro@main`], with one difference: without `flavor` or
/// `worker_threads`, the test's runtime is a current-thread runtime
/// (`flavor = "current_thread"`), as tokio's default test has: the body
/// and its spawned tasks take turns on the test's thread, so a test ported
/// from `#[tokio::test]` keeps the concurrency it was written for.
/// Ask for more with `worker_threads = N` (which implies `multi_thread`) or
/// `flavor = "multi_thread"` (one worker per CPU). `start_paused = true`
/// works with any number of workers.
///
/// # Expansion
///
/// `#[test]` followed by the function rewritten as for [`macro@main`]. The
/// test keeps its other attributes (`#[should_panic]`, `#[ignore]`, ...) and
/// its return type (a test may return a `Result`). Each test gets a fresh
/// runtime, shut down when the test function returns.
///
/// # Compile errors
///
/// Those of [`macro@main`], and a function that already has a `#[test]`
/// attribute.
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(Kind::Test, args.into(), item.into()).into()
}

/// Which attribute is being expanded.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Main,
    Test,
}

impl Kind {
    /// The attribute as users write it, for messages.
    fn attribute(self) -> &'static str {
        match self {
            Kind::Main => "#[brigade::main]",
            Kind::Test => "#[brigade::test]",
        }
    }
}

/// Collects every error found, so that one compile shows them all.
#[derive(Default)]
struct Errors(Option<Error>);

impl Errors {
    fn push(&mut self, error: Error) {
        match &mut self.0 {
            Some(errors) => errors.combine(error),
            None => self.0 = Some(error),
        }
    }

    fn to_compile_error(&self) -> TokenStream2 {
        self.0
            .as_ref()
            .map(Error::to_compile_error)
            .unwrap_or_default()
    }
}

fn expand(kind: Kind, args: TokenStream2, item: TokenStream2) -> TokenStream2 {
    let mut errors = Errors::default();
    let config = parse_arguments(kind, args, &mut errors);
    let function = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Fn(function)) => function,
        Ok(_) => {
            errors.push(Error::new(
                Span::call_site(),
                format!("{} can only be applied to an `async fn`", kind.attribute()),
            ));
            return quote! { #item }
                .into_iter()
                .chain(errors.to_compile_error())
                .collect();
        }
        Err(error) => {
            // Not an item syn understands: hand it back untouched so that
            // rustc reports what is wrong with it.
            errors.push(error);
            return quote! { #item }
                .into_iter()
                .chain(errors.to_compile_error())
                .collect();
        }
    };
    let shape = check_signature(kind, &function, &mut errors);
    let expanded = match shape {
        Shape::Ok => expand_function(kind, &config, function),
        Shape::NotAsync => fallback_original(&function),
        Shape::Unusable => fallback_stub(&function),
    };
    let mut tokens = expanded;
    tokens.extend(errors.to_compile_error());
    tokens
}

/// What [`check_signature`] found.
enum Shape {
    /// The function can be expanded.
    Ok,
    /// Only the `async` keyword is missing: the function is emitted as it
    /// is, so that its body still type-checks.
    NotAsync,
    /// Something the expansion cannot keep (parameters, generics, ...): a
    /// stub with the function's name is emitted instead.
    Unusable,
}

fn check_signature(kind: Kind, function: &ItemFn, errors: &mut Errors) -> Shape {
    let attribute = kind.attribute();
    let signature = &function.sig;
    let mut shape = Shape::Ok;
    if kind == Kind::Test
        && let Some(test) = function.attrs.iter().find(|a| is_test_attribute(a))
    {
        errors.push(Error::new_spanned(
            test,
            "a second test attribute: #[brigade::test] already marks the function as a \
             test; remove this one",
        ));
        shape = Shape::Unusable;
    }
    if signature.asyncness.is_none() {
        errors.push(Error::new_spanned(
            signature.fn_token,
            format!(
                "the `async` keyword is missing from the function declaration: \
                 {attribute} applies to `async fn`s"
            ),
        ));
        if matches!(shape, Shape::Ok) {
            shape = Shape::NotAsync;
        }
    }
    if !signature.inputs.is_empty() || signature.variadic.is_some() {
        let message = match kind {
            Kind::Main if signature.ident == "main" => {
                "the `main` function cannot take arguments (read them with \
                 `std::env::args()` instead)"
                    .to_owned()
            }
            _ => format!("functions with {attribute} cannot take arguments"),
        };
        let error = match &signature.variadic {
            Some(variadic) if signature.inputs.is_empty() => Error::new_spanned(variadic, message),
            _ => Error::new_spanned(&signature.inputs, message),
        };
        errors.push(error);
        shape = Shape::Unusable;
    }
    if !signature.generics.params.is_empty() {
        errors.push(Error::new_spanned(
            &signature.generics,
            format!("{attribute} does not support generic parameters"),
        ));
        shape = Shape::Unusable;
    } else if let Some(where_clause) = &signature.generics.where_clause {
        errors.push(Error::new_spanned(
            where_clause,
            format!("{attribute} does not support `where` clauses"),
        ));
        shape = Shape::Unusable;
    }
    shape
}

/// `#[test]`, or the prelude's `test` named by its path.
fn is_test_attribute(attribute: &Attribute) -> bool {
    let path = attribute.path();
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    match segments.as_slice() {
        [name] => name == "test",
        [krate, prelude, _, name] => {
            matches!(krate.as_str(), "core" | "std") && prelude == "prelude" && name == "test"
        }
        _ => false,
    }
}

/// The rewritten function: builds a runtime and `block_on`s the body.
fn expand_function(kind: Kind, config: &Config, function: ItemFn) -> TokenStream2 {
    let ItemFn {
        attrs,
        vis,
        mut sig,
        block,
    } = function;
    sig.asyncness = None;
    let (outer, inner): (Vec<Attribute>, Vec<Attribute>) = attrs
        .into_iter()
        .partition(|attribute| matches!(attribute.style, syn::AttrStyle::Outer));
    let test_attribute = match kind {
        Kind::Test => quote! { #[::core::prelude::v1::test] },
        Kind::Main => quote! {},
    };
    let krate = config
        .krate
        .as_ref()
        .map_or_else(|| quote! { ::brigade }, ToTokens::to_token_stream);
    let constructor = match config.flavor(kind) {
        args::Flavor::CurrentThread => {
            quote_spanned! {config.flavor_span()=> #krate::runtime::Builder::new_current_thread() }
        }
        args::Flavor::MultiThread => quote! { #krate::Builder::new() },
    };
    let worker_threads = config
        .worker_count(kind)
        .map(|count| quote_spanned! {count.span()=> .worker_threads(#count) });
    let start_paused = config
        .start_paused
        .map(|(paused, span)| quote_spanned! {span=> .start_paused(#paused) });
    let site = Span::mixed_site();
    // The body's type is pinned to the declared return type up front, so
    // that `?` inside it knows which error type to convert into.
    let body = match &sig.output {
        ReturnType::Type(_, output) if contains_impl_trait(output) => {
            quote_spanned! {site=> let body = async #block; }
        }
        output => {
            let output = match output {
                ReturnType::Default => quote! { () },
                ReturnType::Type(_, output) => output.to_token_stream(),
            };
            quote_spanned! {site=>
                fn __brigade_body<F: ::core::future::Future<Output = #output>>(body: F) -> F {
                    body
                }
                let body = __brigade_body(async #block);
            }
        }
    };
    let message = format!(
        "{}: could not build the brigade runtime: {{}}",
        kind.attribute()
    );
    let run = quote_spanned! {site=>
        {
            let runtime = #constructor
                #worker_threads
                #start_paused
                .build()
                .unwrap_or_else(|error| ::std::panic!(#message, error));
            runtime.block_on(body)
        }
    };
    quote! {
        #test_attribute
        #(#outer)*
        #vis #sig {
            #(#inner)*
            #body
            #run
        }
    }
}

/// Whether `ty` mentions `impl Trait`, which cannot name a future's output
/// in a bound.
fn contains_impl_trait(ty: &Type) -> bool {
    fn mentions_impl(tokens: TokenStream2) -> bool {
        tokens.into_iter().any(|token| match token {
            proc_macro2::TokenTree::Ident(ident) => ident == "impl",
            proc_macro2::TokenTree::Group(group) => mentions_impl(group.stream()),
            _ => false,
        })
    }
    mentions_impl(ty.to_token_stream())
}

/// The function as written (it is only missing `async`), so that tools such
/// as rust-analyzer still see its body.
fn fallback_original(function: &ItemFn) -> TokenStream2 {
    quote! {
        #[allow(dead_code)]
        #function
    }
}

/// A stand-in with the function's name, so that the error above is the only
/// one (no "`main` function not found").
fn fallback_stub(function: &ItemFn) -> TokenStream2 {
    let vis = &function.vis;
    let ident = &function.sig.ident;
    quote! {
        #[allow(dead_code)]
        #vis fn #ident() {}
    }
}
