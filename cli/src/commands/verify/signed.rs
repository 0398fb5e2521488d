//! `tpack verify --key`: the signature checks R58..R63 against the keys and policy of the command line, in
//! words; then every entry's digest (R64) with its padding and checksum, on several threads, reported in
//! table order whatever thread finds what.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use tpack::auth::{Authenticated, Policy, SoftwareCrypto, TrustedKey};
use tpack::{Container, Entry, Error, Rule};

use super::Options;
use crate::error::Result;
use crate::formats::tpack::{checksum_words, nested_words, Problem};
use crate::keys::{algorithm_code_name, algorithm_name, public_key, PublicKey};
use crate::signer::Signer;
use crate::text::quoted;

/// The keys and policy of `verify --key …`.
#[derive(Debug)]
pub(crate) struct Trust {
    keys: Vec<PublicKey>,
    min_counter: u64,
    subject: Option<String>,
    allow_unsigned: bool,
}

impl Trust {
    /// Reads every `--key` file; `None` without one.
    ///
    /// # Errors
    /// As [`public_key`]: the first key file that cannot be read or is no usable public key.
    pub(crate) fn load(opts: &Options) -> Result<Option<Self>> {
        if opts.keys.is_empty() {
            return Ok(None);
        }
        let keys = opts.keys.iter().map(|p| public_key(p)).collect::<Result<Vec<_>>>()?;
        Ok(Some(Self {
            keys,
            min_counter: opts.min_counter,
            subject: opts.subject.clone(),
            allow_unsigned: opts.allow_unsigned,
        }))
    }
}

/// Why a container is refused before its entries are hashed (R58..R63).
#[derive(Debug, Clone)]
pub(crate) struct Refusal {
    /// The rule, `R58` … `R63`.
    pub(crate) rule: &'static str,
    /// What is wrong, in words that name the rule.
    pub(crate) words: String,
    /// Who the file says signed it, if it is signed.
    pub(crate) signer: Option<Signer>,
}

/// What the signature checks found, for a container they let through.
#[derive(Debug, Clone)]
pub(crate) enum Verdict {
    /// Signed by a trusted key; its entries must match their digests.
    Signed(Signer),
    /// Unsigned, which `--allow-unsigned` accepts.
    UnsignedAllowed,
}

/// The crypto of the core, with SHA-256, Ed25519 and P-256.
const CRYPTO: SoftwareCrypto = SoftwareCrypto;

/// Runs R58..R63 on `c`, then, if they pass, checks every entry: padding (R37), digest (R64) for a signed
/// container, checksum (R50) and nested container, on `threads` threads. `progress` gets the bytes of each
/// entry checked.
///
/// # Errors
/// The [`Refusal`] of R58..R63 (boxed: it is large, and rare).
pub(crate) fn verify(
    c: &Container<'_>,
    trust: &Trust,
    threads: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> std::result::Result<(Verdict, Vec<Problem>), Box<Refusal>> {
    let trusted: Vec<TrustedKey<'_>> = trust.keys.iter().map(|k| k.key.trusted()).collect();
    let policy = Policy {
        keys: &trusted,
        require_signature: !trust.allow_unsigned,
        min_counter: trust.min_counter,
        subject: trust.subject.as_deref(),
    };
    let signer = Signer::of(c);
    let auth = c.authenticate(&policy, &CRYPTO).map_err(|e| Box::new(refusal(&e, signer.clone(), trust)))?;
    let verdict = match auth.signer() {
        Some(a) => Verdict::Signed(Signer::from_attributes(&a)),
        None => Verdict::UnsignedAllowed,
    };
    let problems = check_entries(c, &auth, threads, progress);
    Ok((verdict, problems))
}

/// R58..R63 in words, naming the rule and what the file and the command line say.
fn refusal(e: &Error, signer: Option<Signer>, trust: &Trust) -> Refusal {
    let rule = e.rule();
    let id = signer.as_ref().map(|s| hex::encode(s.key_id)).unwrap_or_default();
    let keys = match trust.keys.len() {
        1 => "the key given with --key".to_owned(),
        n => format!("any of the {n} keys given with --key"),
    };
    let words = match rule {
        Rule::SignatureRequired => {
            "it is not signed, and --key requires a signature (R58); pass --allow-unsigned to accept unsigned files"
                .to_owned()
        }
        Rule::UnknownKey => match signer.as_ref() {
            Some(s) if s.public_key.is_some() && trust.keys.iter().any(|k| key_id(k) == s.key_id) => format!(
                "the public key it carries is not key {id}, which it claims to be signed by (R59)"
            ),
            _ => format!("it is signed by key {id}, which is not {keys} (R59)"),
        },
        Rule::AlgorithmMismatch => {
            let named = signer.as_ref().map_or_else(String::new, |s| algorithm_code_name(s.algorithm));
            match trust.keys.iter().find(|k| signer.as_ref().is_some_and(|s| key_id(k) == s.key_id)) {
                Some(k) => format!(
                    "it says it is signed with {named} by key {id}, but that key ({}) is an {} key (R60)",
                    k.path.display(),
                    algorithm_name(k.key.algorithm())
                ),
                None => format!("it is signed with {named}, which this tool cannot verify (R60)"),
            }
        }
        Rule::SubjectMismatch => format!(
            "its subject is {}, not {} as --subject requires (R61)",
            signer.as_ref().and_then(|s| s.subject.as_deref()).map_or_else(|| "absent".to_owned(), quoted),
            trust.subject.as_deref().map_or_else(|| "the key's".to_owned(), quoted)
        ),
        Rule::Rollback => format!(
            "it is signed with counter {}, below {}, the lowest --min-counter accepts: an older release cannot \
             replace a newer one (R62)",
            signer.as_ref().map_or(0, |s| s.counter),
            trust.min_counter
        ),
        Rule::BadSignature => format!(
            "its signature does not verify with key {id}: its header, table, names, metadata or digests were changed \
             after it was signed, or another key signed it (R63)"
        ),
        _ => e.to_string(),
    };
    Refusal { rule: rule.id(), words, signer }
}

/// The key id of a trusted key file.
fn key_id(k: &PublicKey) -> [u8; 32] {
    k.key.key_id()
}

/// One entry's checks, in the order of the spec: padding before it (R37), its digest (R64, for a signed
/// container and not for the signature entry), its checksum (R50), its nested container.
fn check_entry(
    c: &Container<'_>,
    auth: &Authenticated<'_>,
    entry: &Entry<'_>,
    padding_from: u64,
) -> Option<Problem> {
    let mut what = Vec::new();
    let mut rule = None;
    let padding =
        c.as_bytes().get(usize::try_from(padding_from).ok()?..usize::try_from(entry.offset()).ok()?);
    if let Some(at) = padding.and_then(|p| p.iter().position(|&b| b != 0)) {
        what.push(format!("padding byte {} before it is not zero (rule R37)", padding_from + at as u64));
        rule.get_or_insert("R37");
    }
    let index = entry.position();
    let signed = auth.signer().is_some();
    if signed && index + 1 < c.len() && auth.verify_entry(index, &CRYPTO).is_err() {
        what.push("its payload does not match its signed digest (R64)".to_owned());
        rule.get_or_insert("R64");
    }
    if let Err(e) = entry.verify() {
        let words = match e {
            Error::EntryChecksum { stored, computed, .. } => checksum_words(entry, stored, computed),
            other => other.to_string(),
        };
        what.push(words);
        rule.get_or_insert("R50");
    } else if let Some(Err(e)) =
        entry.nested().map(|n| n.verify().map_err(|e| e.held_by(u32::try_from(index).unwrap_or(u32::MAX))))
    {
        // A nested container's structure was checked when it was parsed: what its verification finds is a
        // payload-integrity rule, R37 or R50, which spec §6 reports as itself (not R39).
        rule.get_or_insert(e.rule().id());
        what.push(nested_words(e));
    }
    let rule = rule?;
    Some(Problem { entry: index, name: entry.name().to_owned(), what: what.join("; "), rule: Some(rule) })
}

/// Every entry checked on `threads` threads, the largest first so that one huge entry does not finish last;
/// the problems in table order.
fn check_entries(
    c: &Container<'_>,
    auth: &Authenticated<'_>,
    threads: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<Problem> {
    let [.., payloads, _] = &c.header().sections;
    let mut cursor = payloads.offset.get();
    let mut work: Vec<(Entry<'_>, u64)> = Vec::with_capacity(c.len());
    for e in c.entries() {
        work.push((e, cursor));
        cursor = e.range().end;
    }
    let mut order: Vec<usize> = (0..work.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(work[i].0.byte_len()));
    let results: Vec<Mutex<Option<Problem>>> = work.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let worker = || {
        while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            let (entry, padding_from) = &work[i];
            let problem = check_entry(c, auth, entry, *padding_from);
            progress(entry.byte_len());
            if let Ok(mut slot) = results[i].lock() {
                *slot = problem;
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads.clamp(1, work.len().max(1)) {
            s.spawn(worker);
        }
        worker();
    });
    results.into_iter().filter_map(|m| m.into_inner().ok().flatten()).collect()
}
