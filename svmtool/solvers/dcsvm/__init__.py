"""DC-SVM (Hsieh, Si and Dhillon 2014): levels of kernel k-means, the conquer step, the
early-prediction models."""
