//! The `tpack` command: argument parsing and printing only; the commands live in the library.

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use tpack_cli::{
    parse_shard_size, run_convert, run_inspect_with, run_keygen, run_pack, run_sign, run_unpack,
    run_verify_files, Format, InspectOptions, KeyAlgorithm, SignOptions, VerifyOptions,
};

const EXIT_CODES: &str = "\
Exit codes:
  0  success (for verify: the file is intact, and authentic when --key is given)
  1  a tpack file is invalid or corrupt, or (verify --key) not authentic
  2  the command line is wrong
  3  an input cannot be used: a manifest problem, an invalid safetensors,
     GGUF, PyTorch, NumPy, ONNX or TensorFlow file, a dtype the output
     format cannot store
  4  a file cannot be read or written, or an output exists without --force,
     or an input was cut short while it was read
  130, 143  interrupted by SIGINT (Ctrl-C) or SIGTERM; the unfinished output
     is deleted";

const EXAMPLES: &str = "\
Examples:
  tpack pack model/manifest.json -o model.tpack
  tpack inspect model.tpack
  tpack inspect model.tpack --entry layers.0.weight --json
  tpack verify /mnt/device/model.tpack
  tpack keygen -o release.pem
  tpack sign model.tpack -o model.signed.tpack --key release.pem --counter 3 --subject acme.kws
  tpack verify model.signed.tpack --key release.pem.pub --min-counter 3 --subject acme.kws
  tpack unpack model.tpack -o model-files/
  tpack convert model.safetensors model.tpack
  tpack convert llama.gguf llama.tpack
  tpack convert model.tpack model.safetensors
  tpack convert llama.tpack llama.gguf --max-shard-size 2GB
  tpack convert model.safetensors.index.json model.tpack
  tpack convert llama-00001-of-00004.gguf llama.tpack
  tpack convert model.tpack out/model.safetensors --max-shard-size 5GB";

/// Inspect, verify, build and convert tpack model-weight containers.
#[derive(Parser)]
#[command(name = "tpack", version, after_help = format!("{EXAMPLES}\n\n{EXIT_CODES}"))]
struct Cli {
    /// Show no progress bars (they appear only on a terminal, for work over 64 MiB).
    #[arg(short, long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show what a tpack, safetensors, GGUF, PyTorch, NumPy (.npy, .npz), ONNX or TensorFlow checkpoint file
    /// holds: header, entries as a tree of name pieces, totals, metadata.
    ///
    /// The format is told from the file's first bytes. For tpack, the structure is checked (every rule but the
    /// payload checksums; `tpack verify` checks those too); a foreign file is checked as `tpack convert` reads it.
    /// Text output fits 100 columns and escapes control and bidi characters in names, keys and values.
    #[command(
        after_help = "Examples:\n  tpack inspect model.tpack\n  tpack inspect model.safetensors --filter 'h.*.attn.*'\n  \
                            tpack inspect llama.gguf --depth 2 --no-tensors\n  \
                            tpack inspect model.tpack --json | jq '.totals'\n  \
                            tpack inspect model.tpack --entry tok_embeddings.weight"
    )]
    Inspect {
        /// The tpack, safetensors, GGUF, PyTorch, NumPy (.npy, .npz) or ONNX file; or a TensorFlow checkpoint
        /// or SavedModel, by its directory, prefix or .index file.
        file: PathBuf,
        /// Print JSON (schema `tpack-inspect/3`, documented in docs/cli.md) instead of text.
        #[arg(long)]
        json: bool,
        /// With --json: metadata arrays whole (otherwise cut to 32 items and marked `"elided": true`).
        #[arg(long)]
        full: bool,
        /// Show only the entry with this exact name.
        #[arg(long, value_name = "NAME")]
        entry: Option<String>,
        /// Show only entries whose name matches: a glob over the whole name if PATTERN has * or ?, else a
        /// substring.
        #[arg(long, value_name = "PATTERN")]
        filter: Option<String>,
        /// Do not list the entries (header, totals and metadata only).
        #[arg(long)]
        no_tensors: bool,
        /// Draw the tree N levels deep; deeper rows are summed up in their parent.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        depth: Option<u64>,
        /// One row per entry with its whole name, in natural order, instead of a tree.
        #[arg(long)]
        flat: bool,
        /// Draw every repeated layer instead of one row for a run of alike layers (`layers.{0..31}.`).
        #[arg(long)]
        expand: bool,
    },
    /// Verify the structure and every checksum of each file, and with --key its signature; exit 0 only if every
    /// file is intact (and authentic).
    ///
    /// Every corrupt entry is named. Nested containers are verified too. Each file's result is printed when it
    /// is known.
    ///
    /// With --key, each file must be signed by one of the keys (unless --allow-unsigned), with a security
    /// counter of at least --min-counter and the subject --subject; then every entry must match the digest the
    /// signature covers. A failure names the check (rule R58..R64) and the entry. Without --key, a signed
    /// file's checksums are verified and its signer is shown, but its signature is not checked.
    #[command(
        after_help = "Examples:\n  tpack verify model.tpack && echo intact\n  tpack verify *.tpack --json\n  \
                            tpack verify model.tpack --key release.pem.pub --min-counter 3 --subject acme.kws"
    )]
    Verify {
        /// The tpack files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print JSON (schema `tpack-verify/1`, documented in docs/cli.md) instead of text.
        #[arg(long)]
        json: bool,
        /// A trusted public key (SPKI PEM, as `tpack keygen` or `openssl pkey -pubout` writes it); repeat for
        /// several. With at least one, every file must be signed by one of them.
        #[arg(long = "key", value_name = "PUBLIC.pem")]
        keys: Vec<PathBuf>,
        /// Refuse a signature whose security counter is below N (rollback protection).
        #[arg(long, value_name = "N", default_value_t = 0, requires = "keys")]
        min_counter: u64,
        /// Refuse a signature whose subject (model line) is not exactly S.
        #[arg(long, value_name = "S", requires = "keys")]
        subject: Option<String>,
        /// With --key: accept an unsigned file (its checksums are still verified); a signed one must still be
        /// authentic.
        #[arg(long, requires = "keys")]
        allow_unsigned: bool,
        /// With --key: hash entries on N threads (default: one per core).
        #[arg(long, value_name = "N", requires = "keys", value_parser = clap::value_parser!(u64).range(1..=1024))]
        threads: Option<u64>,
    },
    /// Make a signing key: a PKCS#8 private key in KEY.pem (owner-only) and its public key in KEY.pem.pub.
    ///
    /// The files are the PEM files `openssl genpkey` and `openssl pkey -pubout` write, and openssl reads them.
    /// The key id printed is the SHA-256 of the public key's DER form, which signed files name their key by
    /// (`openssl pkey -pubin -in KEY.pem.pub -outform DER | sha256sum` prints it too).
    #[command(
        after_help = "Examples:\n  tpack keygen -o release.pem\n  tpack keygen --algorithm p256 -o hsm-compatible.pem\n\n\
                            Keys made by openssl work as well:\n  openssl genpkey -algorithm ed25519 -out release.pem\n  \
                            openssl pkey -in release.pem -pubout -out release.pem.pub"
    )]
    Keygen {
        /// The signature algorithm: Ed25519 (every verifier has it) or ECDSA P-256 (HSMs, secure elements, and
        /// OMS bundles).
        #[arg(long, value_enum, default_value_t = Algorithm::Ed25519)]
        algorithm: Algorithm,
        /// The private key file to write; the public key goes to the same path with `.pub` added.
        #[arg(short, long, value_name = "KEY.pem")]
        output: PathBuf,
        /// Replace KEY.pem and KEY.pem.pub if they exist.
        #[arg(long)]
        force: bool,
    },
    /// Sign a container: OUT is IN with a signature over its prefix and a SHA-256 digest of every entry.
    ///
    /// IN is verified completely first. A signed IN is re-signed (its old signature replaced). Signing is
    /// deterministic: the same IN, key and options give the same bytes. OUT appears atomically.
    #[command(
        after_help = "Examples:\n  tpack sign model.tpack -o model.signed.tpack --key release.pem --counter 3 \
                            --subject acme.kws\n  \
                            tpack sign model.tpack -o model.signed.tpack --key p256.pem --oms-bundle model.signed.tpack.sig\n  \
                            model_signing verify key model.signed.tpack --signature model.signed.tpack.sig \
                            --public_key p256.pem.pub"
    )]
    Sign {
        /// The container to sign.
        input: PathBuf,
        /// The signed container to write.
        #[arg(short, long, value_name = "OUT")]
        output: PathBuf,
        /// The private key (PKCS#8 PEM, Ed25519 or ECDSA P-256, as `tpack keygen` or `openssl genpkey` writes it).
        #[arg(long, value_name = "PRIVATE.pem")]
        key: PathBuf,
        /// The security counter: verifiers given --min-counter refuse files signed with a lower one. Raise it
        /// for a release that must replace older ones for good.
        #[arg(long, value_name = "N", default_value_t = 0)]
        counter: u64,
        /// The subject: the model line this file belongs to (1 to 255 bytes of UTF-8), e.g. `acme.kws`.
        #[arg(long, value_name = "S")]
        subject: Option<String>,
        /// Store the public key in the file, for devices that keep only key ids.
        #[arg(long)]
        embed_public_key: bool,
        /// Also write an OpenSSF model-signing (sigstore) bundle for OUT, which `model_signing verify key`
        /// checks. Needs an ECDSA P-256 key: --key if it is one, else --oms-key.
        #[arg(long, value_name = "BUNDLE")]
        oms_bundle: Option<PathBuf>,
        /// The ECDSA P-256 private key that signs the OMS bundle when --key is an Ed25519 key.
        #[arg(long, value_name = "P256.pem", requires = "oms_bundle")]
        oms_key: Option<PathBuf>,
        /// Replace OUT (and BUNDLE) if they exist.
        #[arg(long)]
        force: bool,
    },
    /// Build a container from a JSON manifest (schema in docs/cli.md).
    ///
    /// The manifest is checked completely before anything is written; payloads stream from their files and the
    /// output appears atomically, complete or not at all.
    #[command(
        after_help = "Example manifest:\n  {\"tpack_manifest\": 1, \"address_bits\": 32,\n   \"entries\": [{\"name\": \
                            \"w\", \"dtype\": \"F32\", \"shape\": [2, 3], \"file\": \"w.bin\", \"target\": \"0x20000000\"}],\n   \
                            \"metadata\": [{\"key\": \"layers\", \"type\": \"u64[]\", \"value\": [784, 10]}]}\n\n\
                            Example:\n  tpack pack model/manifest.json -o model.tpack"
    )]
    Pack {
        /// The manifest.
        manifest: PathBuf,
        /// The container to write.
        #[arg(short, long, value_name = "OUT")]
        output: PathBuf,
        /// Replace OUT if it exists.
        #[arg(long)]
        force: bool,
    },
    /// Write every payload to a file in DIR, with a manifest from which `pack` rebuilds the identical file.
    ///
    /// File names are built from the entry index and an escaped name, so no entry name can become a path
    /// outside DIR. Existing files are not replaced without --force.
    #[command(after_help = "Example:\n  tpack unpack model.tpack -o model-files/\n  \
                            tpack pack model-files/manifest.json -o copy.tpack && cmp model.tpack copy.tpack")]
    Unpack {
        /// The tpack file.
        file: PathBuf,
        /// The directory to write (created if missing).
        #[arg(short, long, value_name = "DIR")]
        output: PathBuf,
        /// Replace existing files in DIR.
        #[arg(long)]
        force: bool,
    },
    /// Convert safetensors, GGUF (every GGML type), PyTorch, NumPy .npy/.npz, ONNX or TensorFlow checkpoints and
    /// SavedModel variables → tpack; tpack →
    /// safetensors, GGUF, NumPy .npz or ONNX (an initializer-only model and its external-data file).
    ///
    /// PyTorch checkpoints (torch.save zip or legacy files, TorchScript archives, pytorch_model.bin) are read
    /// by a restricted pickle machine that builds only tensors and plain values and never runs their code.
    /// The input format is told from its first bytes, the output format from OUT's extension (or --to).
    /// Tensor bytes are copied unchanged; the input is validated completely first. A GGUF file converted to
    /// tpack and back comes back byte for byte. IN may be a sharded model: a Hugging Face
    /// `*.safetensors.index.json` (or its directory) or the first file of a split GGUF; every shard is
    /// checked and the whole model becomes one container.
    #[command(after_help = "Examples:\n  tpack convert model.safetensors model.tpack\n  \
                            tpack convert llama-q4_k_m.gguf llama.tpack\n  tpack convert pytorch_model.bin model.tpack\n  \
                            tpack convert llama.tpack llama.gguf\n  \
                            tpack convert llama.tpack llama.gguf --max-shard-size 2GB\n  \
                            tpack convert model.tpack model.safetensors\n  \
                            tpack convert hf-model/ model.tpack\n  tpack convert llama-00001-of-00004.gguf llama.tpack\n  \
                            tpack convert model.tpack out/model.safetensors --max-shard-size 5GB")]
    Convert {
        /// The input file.
        input: PathBuf,
        /// The output file.
        output: PathBuf,
        /// The output format, when OUT's extension does not say.
        #[arg(long, value_enum)]
        to: Option<Target>,
        /// Replace OUT if it exists (with --max-shard-size: replace existing shards).
        #[arg(long)]
        force: bool,
        /// Write safetensors or GGUF output as shards of at most SIZE bytes of tensor data each, named as
        /// Hugging Face (with an index) or llama.cpp name them: 123, 500MB, 5GB (powers of 1000), 500MiB,
        /// 1.5GiB (powers of 1024). A safetensors tensor larger than SIZE gets a shard of its own.
        #[arg(long, value_name = "SIZE", value_parser = parse_shard_size)]
        max_shard_size: Option<u64>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Algorithm {
    Ed25519,
    P256,
}

#[derive(Clone, Copy, ValueEnum)]
enum Target {
    Tpack,
    Safetensors,
    Gguf,
    Npz,
    Onnx,
}

fn main() {
    let cli = Cli::parse();
    tpack_cli::signals::install();
    let quiet = cli.quiet;
    let result = match &cli.command {
        Command::Inspect { file, json, full, entry, filter, no_tensors, depth, flat, expand } => {
            let opts = InspectOptions {
                entry: entry.clone(),
                json: *json,
                full: *full,
                expand: *expand,
                filter: filter.clone(),
                no_tensors: *no_tensors,
                depth: depth.map(|d| usize::try_from(d).unwrap_or(usize::MAX)),
                flat: *flat,
            };
            run_inspect_with(file, &opts)
        }
        Command::Verify { files, json, keys, min_counter, subject, allow_unsigned, threads } => {
            let opts = VerifyOptions {
                json: *json,
                keys: keys.clone(),
                min_counter: *min_counter,
                subject: subject.clone(),
                allow_unsigned: *allow_unsigned,
                threads: threads.map(|n| usize::try_from(n).unwrap_or(1)),
            };
            run_verify_files(files, &opts, quiet, &mut std::io::stdout())
        }
        Command::Keygen { algorithm, output, force } => {
            let algorithm = match algorithm {
                Algorithm::Ed25519 => KeyAlgorithm::Ed25519,
                Algorithm::P256 => KeyAlgorithm::EcdsaP256,
            };
            run_keygen(algorithm, output, *force)
        }
        Command::Sign {
            input,
            output,
            key,
            counter,
            subject,
            embed_public_key,
            oms_bundle,
            oms_key,
            force,
        } => {
            let opts = SignOptions {
                key: key.clone(),
                counter: *counter,
                subject: subject.clone(),
                embed_public_key: *embed_public_key,
                oms_bundle: oms_bundle.clone(),
                oms_key: oms_key.clone(),
                force: *force,
            };
            run_sign(input, output, &opts)
        }
        Command::Pack { manifest, output, force } => run_pack(manifest, output, *force, quiet),
        Command::Unpack { file, output, force } => run_unpack(file, output, *force),
        Command::Convert { input, output, to, force, max_shard_size } => {
            let to = to.map(|t| match t {
                Target::Tpack => Format::Tpack,
                Target::Safetensors => Format::Safetensors,
                Target::Gguf => Format::Gguf,
                Target::Npz => Format::Npz,
                Target::Onnx => Format::Onnx,
            });
            run_convert(input, output, to, *force, *max_shard_size, quiet)
        }
    };
    tpack_cli::signals::finish(|| match result {
        Ok(text) => {
            // A closed pipe (`tpack inspect … | head`) is not an error worth a message.
            let _ = std::io::stdout().write_all(text.as_bytes());
            0
        }
        Err(e) => {
            let e = tpack_cli::signals::explain(e);
            eprintln!("error: {e}");
            e.kind().exit_code()
        }
    })
}
