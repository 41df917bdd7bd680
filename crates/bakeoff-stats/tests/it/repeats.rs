//! A figure measured several times: the mean's Student-t interval (R: `t.test(x)$conf.int`),
//! the interval of a figure that cannot be negative, and Cochran's Q.

use bakeoff_stats::{cochran_q, mean_interval, mean_interval_nonnegative};

use crate::close;

#[test]
fn the_mean_of_one_to_five_has_r_s_interval() {
    // t.test(1:5)$conf.int: 1.036757 4.963243; the crate's t table holds three decimals
    // (t(0.975, 4) = 2.776 for 2.776445), so R's bounds to within a thousandth.
    let m = mean_interval(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    assert_eq!((m.n, m.mean), (5, 3.0));
    assert!(close(m.low, 1.036_757, 1e-3), "{m:?}");
    assert!(close(m.high, 4.963_243, 1e-3), "{m:?}");
    assert!(close(m.half_width(), 1.963_243, 1e-3), "{m:?}");
    // One finite value has no spread: no interval rather than a zero-width one.
    assert!(mean_interval(&[3.0, f64::NAN]).is_none());
}

#[test]
fn a_figure_that_cannot_be_negative_keeps_its_interval_above_zero() {
    // A wide spread: the symmetric interval would reach below zero.
    let values = [0.5, 9.0, 1.0];
    let t = mean_interval(&values).unwrap();
    assert!(t.low < 0.0, "{t:?}");
    let m = mean_interval_nonnegative(&values).unwrap();
    assert_eq!(m.mean, t.mean);
    assert!(m.low > 0.0 && m.low < m.mean && m.high > m.mean, "{m:?}");
    assert!(mean_interval_nonnegative(&[-1.0, 2.0]).is_none());
}

#[test]
fn repeats_that_disagree_beyond_their_errors_are_told_apart() {
    let same = cochran_q(&[10.0, 10.2, 9.9], &[0.5, 0.5, 0.5]).unwrap();
    assert!(!same.disagree, "{same:?}");
    let apart = cochran_q(&[10.0, 20.0, 30.0], &[0.5, 0.5, 0.5]).unwrap();
    assert!(apart.disagree, "{apart:?}");
    assert_eq!(apart.df, 2);
    assert!(cochran_q(&[1.0, 2.0], &[0.5, 0.0]).is_none());
}
