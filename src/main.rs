fn main() {
    let cli = forge::cli::parse();
    if let Err(e) = forge::cli::run(cli) {
        // One line: the error and each cause once (see `util::error_line`).
        eprintln!("error: {}", forge::util::error_line(e.as_ref()));
        std::process::exit(1);
    }
}
