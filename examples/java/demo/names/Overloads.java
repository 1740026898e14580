package demo.names;

import demo.names.segment_one_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.segment_two_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.LongClassNameForExactReporting_cccccccccc;
import demo.util.Harness;

/**
 * usage: Overloads N. Per iteration: f() once, f(I) twice, f(Ljava/lang/String;) three
 * times, f(JD) four times, and the long-named class's ping(I) five times.
 */
public final class Overloads {
    static int f() { return 1; }
    static int f(int x) { return x + 2; }
    static int f(String s) { return s.length(); }
    static int f(long a, double b) { return (int) (a + b); }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Harness.awaitGo();
        int acc = 0;
        for (int i = 0; i < n; i++) {
            acc += f();
            for (int k = 0; k < 2; k++) acc += f(k);
            for (int k = 0; k < 3; k++) acc += f("abc");
            for (int k = 0; k < 4; k++) acc += f(k, 0.5);
            for (int k = 0; k < 5; k++) acc = LongClassNameForExactReporting_cccccccccc.ping(acc);
        }
        Harness.done("acc=" + acc);
    }
}
