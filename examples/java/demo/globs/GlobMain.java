package demo.globs;

import demo.globs.shop.Shop;
import demo.util.Harness;

/**
 * usage: GlobMain N [LONG]. N rounds of: new Shop(); getA(); getB(); setA(); Inner.getC() x2;
 * Inner.setC() x3; decoy Inner.getC(). Per-method calls over the run:
 *   Shop.&lt;init&gt; N, Shop.getA 2N (N direct, N from getB), Shop.getB N,
 *   Shop.setA 3N (2N from getA, N direct), Shop$Inner.getC 5N (2N direct, 3N from setC),
 *   Shop$Inner.setC 3N, decoy/Inner.getC N.
 * With LONG, also LongNames.ping() and LongNames' 480-character method N times each.
 * DONE n=N.
 */
public final class GlobMain {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        boolean longNames = args.length > 1 && args[1].equals("LONG");
        Harness.awaitGo();
        long x = 0;
        for (int i = 0; i < n; i++) {
            Shop s = new Shop();
            x += s.getA();
            x += s.getB();
            s.setA(i);
            x += Shop.Inner.getC();
            x += Shop.Inner.getC();
            for (int k = 0; k < 3; k++) {
                Shop.Inner.setC(k);
            }
            x += demo.globs.decoy.Inner.getC();
            if (longNames) {
                x += LongNames.ping();
                x += LongNames.longName();
            }
        }
        Harness.done("n=" + n + " x=" + x);
    }
}
