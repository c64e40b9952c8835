fn main() {
    let cli = forge::cli::parse();
    if let Err(e) = forge::cli::run(cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
