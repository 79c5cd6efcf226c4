use std::process::ExitCode;

fn main() -> ExitCode {
    toolport::cli::main()
}
