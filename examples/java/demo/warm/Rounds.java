package demo.warm;

import demo.util.Harness;
import demo.warm.tree.Tree;

/**
 * A warm JVM that runs rounds of a known call tree on request (for the runtime
 * switch: the code is JIT-compiled before any trace). It first runs WARM calls
 * of Tree.a() in 20 rounds, so that C1 and C2 compile and inline them, prints
 * READY, then reads lines: "N" runs N calls of Tree.a() (1 a, 2 b, 5 c each) in
 * a fresh call of run() and prints DONE calls=N; "quit" or the end of stdin ends it.
 * usage: Rounds WARM [UNIT] (UNIT: Tree's work multiplier, default 1)
 */
public final class Rounds {
    private Rounds() {}

    static void run(int n) {
        for (int i = 0; i < n; i++) {
            Tree.a();
        }
    }

    public static void main(String[] args) throws Exception {
        int warm = Integer.parseInt(args[0]);
        if (args.length > 1) {
            Tree.unit = Integer.parseInt(args[1]);
        }
        for (int r = 0; r < 20; r++) {
            run(warm / 20);
        }
        Harness.ready();
        for (String line = Harness.nextLine(); line != null && !line.equals("quit"); line = Harness.nextLine()) {
            int n = Integer.parseInt(line.trim());
            run(n);
            Harness.done("calls=".concat(Integer.toString(n)));
        }
    }
}
