//! The `#Key` names of the patient file.

pub const AGE: &str = "Age";
pub const SEX: &str = "Sex";
pub const HEIGHT: &str = "Height";
pub const WEIGHT: &str = "Weight";
pub const PREGNANCY_STATUS: &str = "Pregnancy status";
pub const MURMUR: &str = "Murmur";
pub const MURMUR_LOCATIONS: &str = "Murmur locations";
pub const MOST_AUDIBLE_LOCATION: &str = "Most audible location";
pub const SYSTOLIC_MURMUR_TIMING: &str = "Systolic murmur timing";
pub const SYSTOLIC_MURMUR_SHAPE: &str = "Systolic murmur shape";
pub const SYSTOLIC_MURMUR_GRADING: &str = "Systolic murmur grading";
pub const SYSTOLIC_MURMUR_PITCH: &str = "Systolic murmur pitch";
pub const SYSTOLIC_MURMUR_QUALITY: &str = "Systolic murmur quality";
pub const DIASTOLIC_MURMUR_TIMING: &str = "Diastolic murmur timing";
pub const DIASTOLIC_MURMUR_SHAPE: &str = "Diastolic murmur shape";
pub const DIASTOLIC_MURMUR_GRADING: &str = "Diastolic murmur grading";
pub const DIASTOLIC_MURMUR_PITCH: &str = "Diastolic murmur pitch";
pub const DIASTOLIC_MURMUR_QUALITY: &str = "Diastolic murmur quality";
pub const OUTCOME: &str = "Outcome";
pub const CAMPAIGN: &str = "Campaign";
pub const ADDITIONAL_ID: &str = "Additional ID";

/// The keys the validation and test files carry (the challenge's data table); every
/// other key is training-only and [`super::PatientFile::without_labels`] drops it.
pub const PARTICIPANT_VISIBLE: [&str; 5] = [AGE, SEX, HEIGHT, WEIGHT, PREGNANCY_STATUS];

/// Every key we type, in the order the training files write them.
pub const STANDARD_ORDER: [&str; 21] = [
    AGE,
    SEX,
    HEIGHT,
    WEIGHT,
    PREGNANCY_STATUS,
    MURMUR,
    MURMUR_LOCATIONS,
    MOST_AUDIBLE_LOCATION,
    SYSTOLIC_MURMUR_TIMING,
    SYSTOLIC_MURMUR_SHAPE,
    SYSTOLIC_MURMUR_GRADING,
    SYSTOLIC_MURMUR_PITCH,
    SYSTOLIC_MURMUR_QUALITY,
    DIASTOLIC_MURMUR_TIMING,
    DIASTOLIC_MURMUR_SHAPE,
    DIASTOLIC_MURMUR_GRADING,
    DIASTOLIC_MURMUR_PITCH,
    DIASTOLIC_MURMUR_QUALITY,
    OUTCOME,
    CAMPAIGN,
    ADDITIONAL_ID,
];
