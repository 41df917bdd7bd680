mod file;
mod fits;
mod idle;
mod interrupt;
mod journal;
mod run;
