package demo.recursion;

import demo.util.Harness;

/**
 * usage: Deep DEPTH LEAVES [first]. Recurses DEPTH levels in down(), then, already deep, prints
 * READY and waits; after the go line calls leaf() LEAVES times and unwinds. A tracer attached at
 * READY sees DEPTH returns of down() whose entries it never saw. With "first", it waits for the
 * go line before recursing instead: down() DEPTH + 1 calls, all seen.
 */
public final class Deep {
    static int leaves;
    static boolean waitFirst;

    static int leaf(int x) {
        return x * 7 + 1;
    }

    static int down(int depth) throws Exception {
        if (depth == 0) {
            if (!waitFirst) {
                Harness.awaitGo();
            }
            int x = 0;
            for (int i = 0; i < leaves; i++) {
                x = leaf(x);
            }
            return x;
        }
        return down(depth - 1) + 1;
    }

    public static void main(String[] args) throws Exception {
        int depth = Integer.parseInt(args[0]);
        leaves = Integer.parseInt(args[1]);
        waitFirst = args.length > 2 && args[2].equals("first");
        Thread t = new Thread(null, () -> {
            try {
                if (waitFirst) {
                    Harness.awaitGo();
                }
                Harness.done("x=" + down(depth));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "deep", 512L << 20);
        t.start();
        t.join();
    }
}
