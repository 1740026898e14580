package demo.filter;

import demo.filter.keptx.Decoy;
import demo.filter.kept.Outer;
import demo.util.Harness;

/**
 * usage: FilterMain N. Calls Outer.run() N times (Outer -> untraced Middle -> Inner twice)
 * and Decoy.touch() 3N times. With --package demo/filter/kept:
 * Outer N calls, 2200 us inclusive and 1400 us exclusive each; Inner 2N calls of 400 us.
 */
public final class FilterMain {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Harness.awaitGo();
        int x = 0;
        for (int i = 0; i < n; i++) {
            Outer.run();
            for (int k = 0; k < 3; k++) {
                x = Decoy.touch(x);
            }
        }
        Harness.done("x=" + x);
    }
}
