package demo.churn;

/**
 * The template ClassChurn defines again in a fresh class loader each round, with its method
 * m00000 renamed m00001, m00002, ... (the same length, so only one constant-pool entry changes).
 */
public final class Churned {
    private Churned() {}

    public static long m00000(long x) {
        return x * 31 + 7;
    }

    // Calls the renamed method n times.
    public static long loop(long x, int n) {
        for (int i = 0; i < n; i++) {
            x = m00000(x);
        }
        return x;
    }
}
