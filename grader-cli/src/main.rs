//! The `grader` binary: parses the command line and hands it to [`grader_cli::run`].

use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let cli = grader_cli::Cli::parse();
    let stdout = std::io::stdout();
    let auto_color = anstream::AutoStream::choice(&stdout) != anstream::ColorChoice::Never;
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut err = std::io::stderr().lock();
    let mut code = grader_cli::run(cli, auto_color, &mut out, &mut err);
    if let Err(error) = out.flush() {
        // A reader that went away (`grader show big.jsonl | head`) is not an error of ours.
        if error.kind() != std::io::ErrorKind::BrokenPipe {
            let _ = writeln!(err, "grader: cannot write the output: {error}");
            code = grader_cli::EXIT_USAGE;
        }
    }
    ExitCode::from(code)
}
