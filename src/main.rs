use clap::Parser;

fn main() {
    let cli = forge::cli::Cli::parse();
    if let Err(e) = forge::cli::run(cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
