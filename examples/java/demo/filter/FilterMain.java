package demo.filter;

import demo.filter.keptx.Decoy;
import demo.filter.kept.Inner;
import demo.filter.kept.Outer;
import demo.filter.skipped.Middle;
import demo.util.Harness;

/**
 * usage: FilterMain N. Calls Outer.run() N times (Outer -> untraced Middle -> Inner twice)
 * and Decoy.touch() 3N times. With --package demo/filter/kept:
 * Outer N calls, 2200 us inclusive and 1400 us exclusive each; Inner 2N calls of 400 us.
 * The JVM times each method's bodies (inside the tracer's frames) and its call sites
 * (enclosing them). DONE x=... outer_body_ns= outer_site_ns= middle_body_ns=
 * middle_site_ns= inner_body_ns= inner_site_ns= (totals over all calls).
 */
public final class FilterMain {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Harness.awaitGo();
        int x = 0;
        long outerSite = 0;
        for (int i = 0; i < n; i++) {
            long s = System.nanoTime();
            Outer.run();
            outerSite += System.nanoTime() - s;
            for (int k = 0; k < 3; k++) {
                x = Decoy.touch(x);
            }
        }
        Harness.done("x=" + x + " outer_body_ns=" + Outer.ns + " outer_site_ns=" + outerSite
                + " middle_body_ns=" + Middle.ns + " middle_site_ns=" + Outer.middleSiteNs
                + " inner_body_ns=" + Inner.ns + " inner_site_ns=" + Middle.innerSiteNs);
    }
}
