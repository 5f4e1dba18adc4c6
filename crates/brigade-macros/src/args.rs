//! The attributes' arguments: tokio's names (`flavor`, `worker_threads`,
//! `start_paused`, `crate`), parsed into a [`Config`], with every problem
//! reported as a compile error pointing at it.

use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Error, Expr, Lit, LitInt, Meta, Token};

use super::{Errors, Kind};

/// The accepted arguments, as listed in messages.
const ACCEPTED_ARGUMENTS: &str = "`flavor = \"current_thread\"` or `flavor = \"multi_thread\"`, \
     `worker_threads = N`, `start_paused = true`, `crate = \"path\"`";

/// The runtime shape asked for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// No worker thread: the thread in `block_on` runs the tasks
    /// (`brigade::Builder::new_current_thread`).
    CurrentThread,
    /// `worker_threads` workers, or the builder's default.
    MultiThread,
}

/// The settings given as arguments of the attribute.
#[derive(Default)]
pub(crate) struct Config {
    /// `flavor = "..."`, and the span of its literal.
    pub(crate) flavor: Option<(Flavor, Span)>,
    /// `worker_threads = N`: the count and the span of its literal.
    pub(crate) worker_threads: Option<(usize, Span)>,
    /// `start_paused = true`, and the span of its literal.
    pub(crate) start_paused: Option<(bool, Span)>,
    /// `crate = "path"`: the path the expansion names brigade by.
    pub(crate) krate: Option<syn::Path>,
}

impl Config {
    /// The flavor in effect: the one given, else `multi_thread` if
    /// `worker_threads` is given, else the attribute's default (one worker
    /// for a test, as tokio's test; the builder's default for `main`).
    pub(crate) fn flavor(&self, kind: Kind) -> Flavor {
        match (self.flavor, self.worker_threads, kind) {
            (Some((flavor, _)), _, _) => flavor,
            (None, Some(_), _) | (None, None, Kind::Main) => Flavor::MultiThread,
            (None, None, Kind::Test) => Flavor::CurrentThread,
        }
    }

    /// The span the builder's constructor is named with: that of the
    /// `flavor` argument, if given.
    pub(crate) fn flavor_span(&self) -> Span {
        self.flavor.map_or(Span::call_site(), |(_, span)| span)
    }

    /// The worker count to set, if any, as a literal with the span of the
    /// argument that asked for it (never for `current_thread`, whose one
    /// worker is the thread in `block_on`).
    pub(crate) fn worker_count(&self, kind: Kind) -> Option<LitInt> {
        match self.flavor(kind) {
            Flavor::CurrentThread => None,
            Flavor::MultiThread => self
                .worker_threads
                .map(|(count, span)| LitInt::new(&count.to_string(), span)),
        }
    }
}

/// Parses the attribute's arguments, reporting every problem in `errors`.
pub(crate) fn parse_arguments(kind: Kind, args: TokenStream2, errors: &mut Errors) -> Config {
    let mut config = Config::default();
    if args.is_empty() {
        return config;
    }
    let parser = Punctuated::<Meta, Token![,]>::parse_terminated;
    let metas = match syn::parse::Parser::parse2(parser, args) {
        Ok(metas) => metas,
        Err(error) => {
            errors.push(Error::new(
                error.span(),
                format!(
                    "malformed {} arguments ({error}); the accepted arguments are: \
                     {ACCEPTED_ARGUMENTS}",
                    kind.attribute()
                ),
            ));
            return config;
        }
    };
    for meta in metas {
        if let Err(error) = parse_argument(kind, &meta, &mut config) {
            errors.push(error);
        }
    }
    if let (Some((Flavor::CurrentThread, _)), Some((_, span))) =
        (config.flavor, config.worker_threads)
    {
        errors.push(Error::new(
            span,
            "`worker_threads` needs the `multi_thread` flavor: the `current_thread` flavor \
             has one worker (write `flavor = \"multi_thread\", worker_threads = N`)",
        ));
    }
    config
}

/// One `name = value` argument into `config`.
fn parse_argument(kind: Kind, meta: &Meta, config: &mut Config) -> syn::Result<()> {
    let path = meta.path();
    let name = path_name(path);
    let value = match meta {
        Meta::NameValue(name_value) => &name_value.value,
        Meta::Path(_) | Meta::List(_) => {
            return Err(match name.as_str() {
                "flavor" | "worker_threads" | "start_paused" | "crate" => Error::new_spanned(
                    meta,
                    format!("`{name}` needs a value: write {}", usage(&name)),
                ),
                _ => unknown_argument(kind, path),
            });
        }
    };
    let duplicate = || {
        Error::new_spanned(
            path,
            format!("duplicate `{name}` argument: give it only once"),
        )
    };
    match name.as_str() {
        "flavor" => {
            let flavor = flavor(value)?;
            set_once(&mut config.flavor, (flavor, value.span()), duplicate)
        }
        "worker_threads" => {
            let count = worker_threads(value)?;
            set_once(&mut config.worker_threads, (count, value.span()), duplicate)
        }
        "start_paused" => {
            let paused = start_paused(value)?;
            set_once(&mut config.start_paused, (paused, value.span()), duplicate)
        }
        "crate" => {
            let krate = crate_path(value)?;
            set_once(&mut config.krate, krate, duplicate)
        }
        _ => Err(unknown_argument(kind, path)),
    }
}

fn set_once<T>(
    slot: &mut Option<T>,
    value: T,
    duplicate: impl FnOnce() -> Error,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(duplicate());
    }
    *slot = Some(value);
    Ok(())
}

fn path_name(path: &syn::Path) -> String {
    path.to_token_stream()
        .to_string()
        .replace(char::is_whitespace, "")
}

/// How to write argument `name`, for messages.
fn usage(name: &str) -> &'static str {
    match name {
        "flavor" => "`flavor = \"current_thread\"` or `flavor = \"multi_thread\"`",
        "worker_threads" => "`worker_threads = N`, where N is a positive integer literal",
        "start_paused" => "`start_paused = true`",
        _ => "`crate = \"path\"`, the path brigade is known by in this crate",
    }
}

fn unknown_argument(kind: Kind, path: &syn::Path) -> Error {
    let name = path_name(path);
    Error::new_spanned(
        path,
        format!(
            "unknown argument `{name}` to {}; the accepted arguments are: {ACCEPTED_ARGUMENTS}",
            kind.attribute()
        ),
    )
}

/// A literal, looking through the invisible group a `macro_rules!`
/// fragment puts around it.
fn literal(value: &Expr) -> Option<&Lit> {
    match value {
        Expr::Group(group) => literal(&group.expr),
        Expr::Lit(literal) if literal.attrs.is_empty() => Some(&literal.lit),
        _ => None,
    }
}

/// The value of `flavor = "..."`.
fn flavor(value: &Expr) -> syn::Result<Flavor> {
    let expected = "`flavor` must be \"current_thread\" (one worker) or \"multi_thread\"";
    match literal(value) {
        Some(Lit::Str(string)) => match string.value().as_str() {
            "current_thread" => Ok(Flavor::CurrentThread),
            "multi_thread" => Ok(Flavor::MultiThread),
            other => Err(Error::new_spanned(
                string,
                format!("{expected}, got \"{other}\""),
            )),
        },
        _ => Err(Error::new_spanned(
            value,
            format!("{expected}, as a string literal"),
        )),
    }
}

/// The value of `start_paused = ...`: a `bool` literal.
fn start_paused(value: &Expr) -> syn::Result<bool> {
    match literal(value) {
        Some(Lit::Bool(paused)) => Ok(paused.value),
        Some(Lit::Str(string)) if matches!(string.value().as_str(), "true" | "false") => {
            Err(Error::new_spanned(
                string,
                format!(
                    "`start_paused` is a `bool`: write `start_paused = {}` without the quotes",
                    string.value()
                ),
            ))
        }
        _ => Err(Error::new_spanned(
            value,
            "`start_paused` must be `true` or `false`",
        )),
    }
}

/// The value of `crate = "path"`: a string literal holding a path.
fn crate_path(value: &Expr) -> syn::Result<syn::Path> {
    let expected = "`crate` must be a string literal holding the path brigade is known by, \
                    like `crate = \"brigade\"` or `crate = \"my_deps::brigade\"`";
    match literal(value) {
        Some(Lit::Str(string)) => string
            .parse::<syn::Path>()
            .map_err(|error| Error::new_spanned(string, format!("{expected}: {error}"))),
        _ => Err(Error::new_spanned(value, expected)),
    }
}

/// The value of `worker_threads = N`: a positive integer literal.
fn worker_threads(value: &Expr) -> syn::Result<usize> {
    let expected = "`worker_threads` must be a positive integer literal, \
                    like `worker_threads = 4`";
    match literal(value) {
        Some(Lit::Int(int)) => {
            if int.base10_digits().starts_with('-') {
                return Err(Error::new_spanned(
                    int,
                    format!("{expected}, got {}", int.base10_digits()),
                ));
            }
            if !matches!(int.suffix(), "" | "usize") {
                return Err(Error::new_spanned(
                    int,
                    format!(
                        "`worker_threads` is a `usize`: drop the `{}` suffix",
                        int.suffix()
                    ),
                ));
            }
            let count: usize = int.base10_parse().map_err(|_| {
                Error::new_spanned(int, "`worker_threads` does not fit in a `usize`")
            })?;
            if count == 0 {
                return Err(Error::new_spanned(
                    int,
                    "`worker_threads` must be at least 1, got 0",
                ));
            }
            Ok(count)
        }
        Some(Lit::Str(string)) if string.value().trim().parse::<usize>().is_ok() => {
            Err(Error::new_spanned(
                string,
                format!(
                    "{expected}: write `worker_threads = {}` without the quotes",
                    string.value().trim()
                ),
            ))
        }
        _ => Err(Error::new_spanned(value, expected)),
    }
}
